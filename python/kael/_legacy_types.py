"""torch's legacy type surface and dtype conversions: the FloatTensor/LongTensor/...
constructors, Tensor.type() and its names, type_as, .int()/.short()/.char()/.byte(),
get/set_default_dtype. Installed by
_tensor_api.install."""
from . import _kael
from ._kael import Tensor


_LEGACY = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
           "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32",
           "ShortTensor": "int16", "CharTensor": "int8", "ByteTensor": "uint8",
           "BoolTensor": "bool_"}


def _legacy_factory(name, dtype_name):
    def factory(*args, device=None):
        dtype = getattr(_kael, dtype_name)
        if len(args) == 1 and not isinstance(args[0], int):
            data = args[0]
            if isinstance(data, Tensor):
                return data.to(dtype)
            return _kael.tensor(data, dtype=dtype, device=device)
        return _kael.zeros(*args, dtype=dtype, device=device)  # sizes (kael zeroes them)
    factory.__name__ = name
    factory.__doc__ = (f"The legacy torch.{name} constructor: {name}(data) is kael.tensor(data, "
                       f"dtype=kael.{dtype_name}), {name}(*sizes) a tensor of that shape (zeros)."
                       f"\n\nExample:\n    >>> kael.{name}(2, 3).shape\n    (2, 3)\n")
    return factory


def _type_name(tensor):
    legacy = {v: k for k, v in _LEGACY.items()}
    name = legacy.get(tensor.dtype.__repr__().split(".")[-1], "Tensor")
    return f"kael.{'cuda.' if tensor.device.type == 'cuda' else ''}{name}"


def _type(self, dtype=None, non_blocking=False):
    """Without dtype, the legacy type name ("kael.FloatTensor", "kael.cuda.LongTensor"); with a
    kael.dtype or such a name ("torch.FloatTensor" too), the tensor converted to it."""
    if dtype is None:
        return _type_name(self)
    if isinstance(dtype, str):
        name = dtype.split(".")[-1]
        if name not in _LEGACY:
            raise ValueError(f"Tensor.type: unknown type {dtype!r}")
        dtype = getattr(_kael, _LEGACY[name])
    return self.to(dtype)


def get_default_dtype():
    """The dtype float factories and Python floats give: kael.float32.

    Example:
        >>> kael.get_default_dtype()
        kael.float32
    """
    return _kael.float32


def set_default_dtype(d):
    """Sets the default float dtype, as torch.set_default_dtype. kael's factories always make
    float32, so only kael.float32 is accepted; another dtype raises NotImplementedError rather
    than being ignored.

    Example:
        >>> kael.set_default_dtype(kael.float32)
    """
    if not isinstance(d, _kael.dtype):
        raise TypeError(f"set_default_dtype: expected a kael.dtype, got {type(d).__name__}")
    if d != _kael.float32:
        raise NotImplementedError(f"set_default_dtype({d!r}): kael's default float dtype is "
                                  f"float32 and cannot be changed yet; pass dtype= to the "
                                  f"factories instead")


def install(namespace):
    Tensor.type = _type

    def type_as(self, other):
        """The tensor converted to other's dtype."""
        if not isinstance(other, Tensor):
            raise TypeError(f"type_as: other must be a Tensor, not {type(other).__name__}")
        return self.to(other.dtype)
    Tensor.type_as = type_as

    def conversion(dtype_name, torch_name):
        def convert(self, memory_format=None):
            return self.to(getattr(_kael, dtype_name))
        convert.__name__ = torch_name
        convert.__doc__ = (f"self.to(kael.{dtype_name}), as torch's Tensor.{torch_name}() (floats "
                           f"rounded toward zero; out-of-range values wrap).\n\nExample:\n"
                           f"    >>> kael.tensor([1.7, -2.5]).{torch_name}().dtype\n"
                           f"    kael.{dtype_name}\n")
        return convert
    for dtype_name, torch_name in (("int32", "int"), ("int16", "short"), ("int8", "char"),
                                   ("uint8", "byte")):
        setattr(Tensor, torch_name, conversion(dtype_name, torch_name))
    for name, dtype_name in _LEGACY.items():
        namespace[name] = _legacy_factory(name, dtype_name)
    namespace.update(get_default_dtype=get_default_dtype, set_default_dtype=set_default_dtype)

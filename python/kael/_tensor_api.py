"""The parts of PyTorch's tensor surface written in Python over kael's ops: Size, data,
nelement, mm/bmm/addmm, new_* factories, masked_select, isclose/equal, format specs on
one-element tensors, and the module-level helpers (is_tensor, numel); the legacy type names and
dtype conversions are _legacy_types'. Installed on kael.Tensor by kael/__init__.py."""
import builtins

from . import _kael, _legacy_types
from ._kael import Tensor


class Size(tuple):
    """A tensor's shape, as torch.Size: a tuple of ints (equal to the plain tuple) with numel().

    Example:
        >>> kael.Size([2, 3]) == kael.zeros(2, 3).shape
        True
        >>> kael.Size([2, 3]).numel()
        6
    """

    def numel(self):
        """The product of the sizes (1 for an empty shape)."""
        count = 1
        for size in self:
            count *= size
        return count

    # repr stays a tuple's, "(2, 3)" (torch prints "torch.Size([2, 3])"): shapes print as
    # kael has always printed them.


def is_tensor(obj):
    """Whether obj is a kael.Tensor.

    Example:
        >>> kael.is_tensor(kael.zeros(1)), kael.is_tensor([1])
        (True, False)
    """
    return isinstance(obj, Tensor)


def numel(input):
    """The number of elements of input.

    Example:
        >>> kael.numel(kael.zeros(2, 3))
        6
    """
    _check_tensors("numel", input=input)
    return input.numel()


def _check_tensors(op, **named):
    for name, value in named.items():
        if not isinstance(value, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, not {type(value).__name__}")


def _matrices(a, b, op, rank):
    _check_tensors(op, input=a, mat2=b)
    if a.dim() != rank or b.dim() != rank:
        raise RuntimeError(f"{op}: expected {rank}-D tensors, got {a.dim()}-D and {b.dim()}-D")


def mm(input, mat2):
    """The matrix product of two 2-D tensors (no broadcasting), as torch.mm.

    Example:
        >>> kael.mm(kael.ones(2, 3), kael.ones(3, 4)).shape
        (2, 4)
    """
    _matrices(input, mat2, "mm", 2)
    return _kael.matmul(input, mat2)


def bmm(input, mat2):
    """Batched matrix products of two 3-D tensors [b, n, m] @ [b, m, p], as torch.bmm.

    Example:
        >>> kael.bmm(kael.ones(5, 2, 3), kael.ones(5, 3, 4)).shape
        (5, 2, 4)
    """
    _matrices(input, mat2, "bmm", 3)
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ ({input.shape[0]} and {mat2.shape[0]})")
    return _kael.matmul(input, mat2)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), input broadcast to the product, as torch.addmm.

    Example:
        >>> kael.addmm(kael.ones(3), kael.ones(2, 4), kael.ones(4, 3)).tolist()
        [[5.0, 5.0, 5.0], [5.0, 5.0, 5.0]]
    """
    _check_tensors("addmm", input=input)
    product = mm(mat1, mat2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # as PyTorch: input is ignored, its NaNs too
        return product + _kael.zeros(product.shape, dtype=product.dtype, device=product.device)
    return product + (input if beta == 1 else input * beta)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * bmm(batch1, batch2), as torch.baddbmm.

    Example:
        >>> kael.baddbmm(kael.zeros(2, 1, 1), kael.ones(2, 1, 3), kael.ones(2, 3, 1)).tolist()
        [[[3.0]], [[3.0]]]
    """
    _check_tensors("baddbmm", input=input)
    product = bmm(batch1, batch2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:
        return product
    return product + (input if beta == 1 else input * beta)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other| (bool), infinities equal to
    themselves, NaN equal to NaN only with equal_nan, as torch.isclose.

    Example:
        >>> kael.isclose(kael.tensor([1.0, 2.0]), kael.tensor([1.0 + 1e-9, 2.1])).tolist()
        [True, False]
    """
    _check_tensors("isclose", input=input)
    if not isinstance(other, (Tensor, int, float)):
        raise TypeError(f"isclose: other must be a Tensor or a number, not "
                        f"{type(other).__name__}")
    if not isinstance(other, Tensor):
        other = _kael.full(input.shape, other, dtype=input.dtype, device=input.device)
    if not (input.dtype.is_floating_point and other.dtype.is_floating_point):
        return _kael.eq(input, other)
    close = _kael.le(_kael.abs(input - other), atol + rtol * _kael.abs(other))
    close = _kael.logical_or(close, _kael.eq(input, other))  # infinities of one sign
    if equal_nan:
        close = _kael.logical_or(close, _kael.logical_and(_kael.isnan(input),
                                                          _kael.isnan(other)))
    return close


def equal(input, other):
    """True when both tensors have one shape and equal elements (NaN never equal), as
    torch.equal.

    Example:
        >>> kael.equal(kael.tensor([1, 2]), kael.tensor([1, 2]))
        True
    """
    _check_tensors("equal", input=input, other=other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return builtins.bool(_kael.eq(input, other).all().item())


def masked_select(input, mask):
    """The elements of input where mask (broadcast together) is True, as a 1-D tensor.

    Example:
        >>> x = kael.tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> kael.masked_select(x, x > 2).tolist()
        [3.0, 4.0]
    """
    _check_tensors("masked_select", input=input, mask=mask)
    if mask.dtype != _kael.bool_:
        raise TypeError(f"masked_select: mask must be a bool tensor, got {mask.dtype}")
    shape = _broadcast_shape(input.shape, mask.shape)
    return input.expand(*shape)[mask.expand(*shape)]


def outer(input, vec2):
    """The outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j], as torch.outer.

    Example:
        >>> kael.outer(kael.tensor([1., 2.]), kael.tensor([3., 4., 5.])).tolist()
        [[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]]
    """
    _check_tensors("outer", input=input, vec2=vec2)
    if input.dim() != 1 or vec2.dim() != 1:
        raise ValueError(f"outer: expected 1-D tensors, got {input.dim()}-D and {vec2.dim()}-D")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


def is_floating_point(input):
    """Whether input's dtype is a floating one (float64, float32, bfloat16, float16).

    Example:
        >>> kael.is_floating_point(kael.zeros(2)), kael.is_floating_point(kael.arange(2))
        (True, False)
    """
    _check_tensors("is_floating_point", input=input)
    return input.dtype.is_floating_point


def _moments(name, spread):
    def moments(input, dim=None, *, correction=None, keepdim=False, unbiased=None):
        _check_tensors(name, input=input)
        if isinstance(dim, builtins.bool):  # the legacy form: std_mean(input, unbiased)
            dim, unbiased = None, dim
        if correction is not None and unbiased is not None:
            raise ValueError(f"{name}: give correction or unbiased, not both")
        chosen = correction if correction is not None else \
            (1 if unbiased is None else builtins.int(unbiased))
        return (spread(input, dim, correction=chosen, keepdim=keepdim),
                input.mean(dim, keepdim=keepdim) if dim is not None else input.mean())
    moments.__name__ = name
    moments.__doc__ = f"""({spread.__name__}, mean) of input over dim (all dims when None), as torch.{name}.

    correction (default 1, Bessel's) or the legacy unbiased flag sets the divisor.

    Example:
        >>> s, m = kael.{name}(kael.tensor([1., 2., 3., 4.]))
        >>> round(m.item(), 2)
        2.5
    """
    return moments


def _broadcast_shape(a, b):
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + tuple(a), (1,) * (rank - len(b)) + tuple(b)
    shape = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise RuntimeError(f"shapes {a} and {b} cannot be broadcast together")
        shape.append(max(x, y))
    return shape


def _format(self, spec):
    if self.dim() == 0 or (spec and self.numel() == 1):
        return format(self.item(), spec)  # f"{loss:.4f}", as PyTorch
    return object.__format__(self, spec)


def _new(name):
    def method(self, *args, dtype=None, device=None, requires_grad=False, **kwargs):
        size = args[0] if len(args) == 1 and not isinstance(args[0], int) else args
        options = dict(dtype=dtype or self.dtype, device=device or self.device,
                       requires_grad=requires_grad)
        if name == "new_full":
            size, fill = args[0], args[1] if len(args) > 1 else kwargs.pop("fill_value")
            return _kael.full(tuple(size), fill, **options)
        factory = {"new_zeros": _kael.zeros, "new_ones": _kael.ones,
                   "new_empty": _kael.empty}[name]
        return factory(*size, **options)
    method.__name__ = name
    method.__doc__ = (f"kael.{name[4:]} with this tensor's dtype and device (each may be "
                      f"overridden), as torch.Tensor.{name}.")
    return method


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    """kael.tensor(data) with this tensor's dtype and device (each may be overridden)."""
    if isinstance(data, Tensor):
        out = data.detach().to(dtype or data.dtype).to(device or self.device).clone()
    else:
        out = _kael.tensor(data, dtype=dtype or self.dtype, device=device or self.device)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _data(self):
    """The tensor's values without its autograd history (detach()): writing to it, or
    assigning a tensor of the same shape to .data, changes the values autograd does not see."""
    return self.detach()


def _set_data(self, value):
    if tuple(value.shape) != tuple(self.shape):
        raise RuntimeError(f"Tensor.data: cannot assign a tensor of shape {tuple(value.shape)} "
                           f"to one of shape {tuple(self.shape)} (kael tensors keep their shape)")
    self.detach().copy_(value)


class _HookHandle:
    """What Tensor.register_hook returns: remove() stops the hook from running."""

    def __init__(self):
        self.removed = False

    def remove(self):
        """The hook no longer runs (it stays registered, doing nothing)."""
        self.removed = True


def _register_hook(self, hook):
    """hook(grad) runs when this tensor's gradient is computed (before a leaf accumulates it);
    a tensor it returns replaces the gradient. Returns a handle with remove()."""
    handle = _HookHandle()

    def run(grad):
        return None if handle.removed else hook(grad)
    _kael._autograd.register_hook(self, run)
    return handle


def _retain_grad(self):
    """Keeps this non-leaf tensor's gradient in .grad after backward (leaves always do)."""
    _kael._autograd.retain_grad(self)


def _detach_(self):
    """Detaches this tensor in place from the graph that made it (a leaf without grad);
    returns it."""
    _kael._autograd.detach_(self)
    return self


def install(namespace):
    original_shape = Tensor.shape
    original_size = Tensor.size

    def shape(self):
        """The sizes of the tensor's dimensions, a kael.Size (a tuple)."""
        return Size(original_shape.__get__(self))

    def size(self, dim=None):
        """The shape (a kael.Size), or the size of dimension dim."""
        return Size(original_shape.__get__(self)) if dim is None else original_size(self, dim)

    Tensor.shape = property(shape, doc=shape.__doc__)
    Tensor.size = size
    Tensor.__format__ = _format
    Tensor.data = property(_data, _set_data, doc=_data.__doc__)
    Tensor.outer = outer
    Tensor.is_floating_point = is_floating_point
    Tensor.nelement = lambda self: self.numel()
    Tensor.nelement.__doc__ = "The number of elements (numel())."
    for name, function in (("mm", mm), ("bmm", bmm), ("isclose", isclose), ("equal", equal),
                           ("masked_select", masked_select)):
        setattr(Tensor, name, function)
    Tensor.addmm = lambda self, mat1, mat2, *, beta=1, alpha=1: addmm(self, mat1, mat2,
                                                                      beta=beta, alpha=alpha)
    Tensor.addmm.__doc__ = addmm.__doc__
    for name in ("new_zeros", "new_ones", "new_empty", "new_full"):
        setattr(Tensor, name, _new(name))
    Tensor.new_tensor = _new_tensor
    Tensor.register_hook = _register_hook
    Tensor.retain_grad = _retain_grad
    Tensor.detach_ = _detach_
    _legacy_types.install(namespace)
    original_int = Tensor.__int__ if hasattr(Tensor, "__int__") else None

    def to_int(self):
        return builtins.int(self.item())
    if original_int is not None:
        Tensor.__int__ = to_int
    namespace.update(Size=Size, is_tensor=is_tensor, numel=numel, mm=mm, bmm=bmm, addmm=addmm,
                     baddbmm=baddbmm, isclose=isclose, equal=equal, masked_select=masked_select,
                     outer=outer, ger=outer, std_mean=_moments("std_mean", _kael.std),
                     var_mean=_moments("var_mean", _kael.var),
                     is_floating_point=is_floating_point)
    from . import autograd
    namespace["inference_mode"] = autograd.inference_mode
    namespace["bool"] = _kael.bool_  # torch.bool (bool_ stays: the builtin's name)
    namespace["int"] = _kael.int32  # torch.int, set here so kael's own modules keep the builtin
    where = namespace["where"]

    def where_with_scalars(condition, input=None, other=None):
        if input is None and other is None:
            return _kael.nonzero(condition, as_tuple=True)
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            # two numbers, as PyTorch: floats give the default float dtype, ints int64
            dtype = _kael.float32 if isinstance(input, float) or isinstance(other, float) \
                else _kael.int64
            input = _kael.full((), input, dtype=dtype, device=condition.device)
        return where(condition, input, other)

    where_with_scalars.__name__ = "where"
    where_with_scalars.__doc__ = where.__doc__
    namespace["where"] = where_with_scalars

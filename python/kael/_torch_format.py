"""PyTorch's checkpoint format (torch.save since 1.6: a zip of data.pkl and one raw file per
storage), read without PyTorch by a restricted unpickler, as torch.load(weights_only=True):
tensors, parameters, containers, numbers, strings, dtypes and devices are rebuilt; any other
global is refused. Written back (kael.save(..., format="torch")) so that torch.load reads it."""
import collections
import io
import pickle
import zipfile

import numpy as np

from . import _kael

# storage class -> (numpy dtype of its bytes, kael dtype): each read as it is stored.
_STORAGES = {"FloatStorage": ("<f4", "float32"), "DoubleStorage": ("<f8", "float64"),
             "HalfStorage": ("<f2", "float16"), "BFloat16Storage": ("<u2", "bfloat16"),
             "LongStorage": ("<i8", "int64"), "IntStorage": ("<i4", "int32"),
             "ShortStorage": ("<i2", "int16"), "CharStorage": ("i1", "int8"),
             "ByteStorage": ("u1", "uint8"), "BoolStorage": ("?", "bool_")}
_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
           "float16": "float16", "half": "float16", "bfloat16": "bfloat16", "int64": "int64",
           "long": "int64", "bool": "bool_", "int32": "int32", "int": "int32", "int16": "int16",
           "short": "int16", "int8": "int8", "uint8": "uint8"}


def is_torch_file(head):
    """Whether the first bytes are a zip's (torch.save's format since 1.6)."""
    return head[:4] == b"PK\x03\x04"


class _Storage:
    def __init__(self, name):
        self.name = name


def _rebuild_tensor(storage, offset, size, stride, requires_grad=False, hooks=None,
                    metadata=None):
    tensor = storage.as_strided(tuple(size), tuple(stride), offset) if storage.numel() else \
        _kael.zeros(tuple(size), dtype=storage.dtype, device=storage.device)
    return tensor.requires_grad_(True) if requires_grad else tensor


def _rebuild_parameter(data, requires_grad, hooks=None, state=None):
    return data.detach().requires_grad_(bool(requires_grad))


class _Unpickler(pickle.Unpickler):
    def __init__(self, data, archive, prefix, place, trusted=False):
        super().__init__(data)
        self.archive, self.prefix, self.place, self.trusted = archive, prefix, place, trusted
        self.storages = {}

    def find_class(self, module, name):
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return _rebuild_tensor
        if module == "torch._utils" and name in ("_rebuild_parameter",
                                                 "_rebuild_parameter_with_state"):
            return _rebuild_parameter
        if module == "collections" and name == "OrderedDict":
            return collections.OrderedDict
        if module == "torch" and name in _STORAGES:
            return _Storage(name)
        if module == "torch" and name in _DTYPES:
            return getattr(_kael, _DTYPES[name])
        if module == "torch" and name == "Size":
            return tuple
        if module == "torch" and name == "device":
            return _kael.device
        if module == "builtins" and name in ("set", "frozenset", "slice", "complex"):
            return {"set": set, "frozenset": frozenset, "slice": slice, "complex": complex}[name]
        if self.trusted and not module.startswith("torch"):
            return super().find_class(module, name)  # weights_only=False: the file is trusted
        raise pickle.UnpicklingError(
            f"kael.load: the checkpoint needs {module}.{name}, which is refused: kael reads "
            f"tensors and containers only, as torch.load(weights_only=True) does (pass "
            f"weights_only=False only for a file you trust: it may then run code)")

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and pid and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"kael.load: unknown persistent id {pid!r:.60}")
        kind, key, location = pid[1], str(pid[2]), str(pid[3])
        if not isinstance(kind, _Storage):
            raise pickle.UnpicklingError(f"kael.load: unknown storage type {kind!r}")
        if key not in self.storages:
            raw, dtype_name = _STORAGES[kind.name]
            values = np.frombuffer(self.archive.read(f"{self.prefix}data/{key}"), dtype=raw)
            if kind.name == "BFloat16Storage":  # numpy has no bf16: its bits, widened exactly
                wide = (values.astype(np.uint32) << 16).view(np.float32)
                tensor = _kael.from_dlpack(wide.copy()).to(_kael.bfloat16)
            elif dtype_name == "bool_":  # DLPack carries no numpy bool: through int64
                tensor = _kael.from_dlpack(values.astype(np.int64)).to(_kael.bool_)
            else:
                tensor = _kael.from_dlpack(values.copy())
            self.storages[key] = tensor.to(self.place(location))
        return self.storages[key]


def _placer(map_location):
    def place(location):
        location = "cpu" if location.startswith("cpu") else location
        if map_location is None:
            target = location
        elif callable(map_location) and not isinstance(map_location, (str, _kael.device)):
            raise TypeError("kael.load: a callable map_location is not supported for PyTorch "
                            "files; give a device or a dict of device names")
        elif isinstance(map_location, dict):
            target = str(map_location.get(location, location))
        else:
            target = str(map_location)
        if not _kael.is_available(target):
            _kael.require_device(target)  # raises with the plugin's reason
        return target
    return place


def load(data, map_location=None, trusted=False):
    """The object a torch.save file (bytes) holds, tensors on map_location's devices; trusted
    lets it unpickle any class (a whole model), as torch.load(weights_only=False)."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = [n for n in archive.namelist() if n.endswith("data.pkl")]
    if not names:
        raise ValueError("kael.load: a zip file without data.pkl is not a PyTorch checkpoint")
    prefix = names[0][:-len("data.pkl")]
    with archive.open(names[0]) as pickled:
        return _Unpickler(pickled, archive, prefix, _placer(map_location), trusted).load()


class _Global:
    """A name torch.load resolves (written as pickle's GLOBAL opcode, never imported here)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce asks for a callable; torch.load calls it
        raise TypeError(f"{self.module}.{self.name} is resolved by torch.load, not here")


_REBUILD = _Global("torch._utils", "_rebuild_tensor_v2")
_ORDERED = _Global("collections", "OrderedDict")
_STORAGE_OF = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
               "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
               "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
               "bool_": "BoolStorage"}


class _Pickler(pickle._Pickler):  # the Python pickler: GLOBALs of names kael does not import
    def __init__(self, file, records):
        super().__init__(file, protocol=2)
        self.records = records  # key -> bytes of each storage
        self.dtypes = {}
        self.kept = []  # every _Global written, alive while the memo refers to it by id

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, _kael.dtype):  # one _Global per dtype, kept (the memo is by id)
            name = repr(obj).split(".")[-1]
            obj = self.dtypes.setdefault(name, _Global("torch", "bool" if name == "bool_"
                                                       else name))
        if isinstance(obj, _Global):
            self.save_global(obj)
            return
        super().save(obj, save_persistent_id)

    def save_global(self, obj, name=None):
        if isinstance(obj, _Global):
            if id(obj) in self.memo:  # written once, referred to after
                self.write(self.get(self.memo[id(obj)][0]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
            self.kept.append(obj)
            self.memoize(obj)
            return
        super().save_global(obj, name)

    def persistent_id(self, obj):
        if isinstance(obj, tuple) and len(obj) == 6 and obj[0] == "kael-storage":
            return ("storage", obj[1], obj[2], obj[3], obj[4])
        return None

    def reducer_override(self, obj):
        if isinstance(obj, _kael.Tensor):
            tensor = obj.detach().contiguous().cpu()
            dtype = repr(tensor.dtype).split(".")[-1]
            key = str(len(self.records))
            if dtype == "bfloat16":  # its bits: the f32 widening's top halves
                values = np.ascontiguousarray(tensor.float().numpy()).reshape(-1)
                raw = (values.view(np.uint32) >> 16).astype("<u2").tobytes()
            else:
                raw = tensor.reshape(-1).numpy().tobytes()
            self.records[key] = raw
            storage = ("kael-storage", _Global("torch", _STORAGE_OF[dtype]), key,
                       "cpu" if obj.device.type == "cpu" else str(obj.device), tensor.numel(),
                       None)
            strides = []
            step = 1
            for size in reversed(tuple(tensor.shape)):
                strides.insert(0, step)
                step *= size
            return (_REBUILD, (storage, 0, tuple(tensor.shape), tuple(strides),
                               bool(obj.requires_grad), _Ordered()))
        if isinstance(obj, collections.OrderedDict):
            return (_ORDERED, (), None, None, iter(obj.items()))
        return NotImplemented


class _Ordered:
    def __reduce__(self):
        return (_ORDERED, ())


def save(obj, file):
    """Writes obj as torch.save does (a zip with data.pkl, one file per tensor)."""
    records = {}
    pickled = io.BytesIO()
    _Pickler(pickled, records).dump(obj)
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("archive/data.pkl", pickled.getvalue())
        archive.writestr("archive/byteorder", "little")
        for key, raw in records.items():
            archive.writestr(f"archive/data/{key}", raw)
        archive.writestr("archive/version", "3\n")

"""kael.save and kael.load: whole training states (nested dicts, lists and tuples of tensors,
numbers, strings) in one safetensors file. The tensors are the file's tensors; the nesting is a
JSON description in its __metadata__, so loading an untrusted file runs no code (no pickle)."""
import base64
import json
import math
import os
import tempfile

from . import _kael
from .safetensors import safe_open, save_file

_KEY = "kael.save"
_FORMAT = 1
# Containers nested deeper than this are refused on save and on load (a ValueError, not the
# interpreter's RecursionError): kael.save and kael.load recurse once a level.
_MAX_DEPTH = 200


class _Encoder:
    def __init__(self):
        self.tensors = {}   # file name -> tensor (contiguous, detached)
        self.names = {}     # identity of the tensor -> its file name (tied tensors stored once)
        self.open = set()   # the containers on the path being encoded

    def tensor(self, value):
        key = hash(value)  # the TensorImpl's address: two wrappers of one tensor share it
        if key not in self.names:
            name = f"t{len(self.names)}"
            self.names[key] = name
            self.tensors[name] = value.detach().contiguous()
        return {"t": "tensor", "name": self.names[key], "device": str(value.device),
                "requires_grad": bool(value.requires_grad)}

    def container(self, value, path):
        # A structure that contains itself, or nests deeper than _MAX_DEPTH, is a ValueError
        # naming the place, not Python's bare RecursionError.
        if id(value) in self.open:
            raise ValueError(f"kael.save: {path} contains itself")
        if len(self.open) >= _MAX_DEPTH:
            where = path if len(path) <= 60 else path[:60] + "..."
            raise ValueError(f"kael.save: {where} nests deeper than {_MAX_DEPTH} levels")
        self.open.add(id(value))
        try:
            if isinstance(value, dict):
                return {"t": "dict", "items": [[self.encode(key, f"{path} key"),
                                                self.encode(item, f"{path}[{key!r}]")]
                                               for key, item in value.items()]}
            return {"t": "list" if isinstance(value, list) else "tuple",
                    "items": [self.encode(item, f"{path}[{i}]") for i, item in enumerate(value)]}
        finally:
            self.open.discard(id(value))

    def encode(self, value, path):
        if value is None:
            return {"t": "none"}
        if isinstance(value, bool):
            return {"t": "bool", "v": value}
        if isinstance(value, int):
            return {"t": "int", "v": str(value)}
        if isinstance(value, float):
            text = repr(value) if math.isfinite(value) else str(value)
            return {"t": "float", "v": text}
        if isinstance(value, str):
            return {"t": "str", "v": value}
        if isinstance(value, (bytes, bytearray)):
            return {"t": "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
        if isinstance(value, _kael.Tensor):
            return self.tensor(value)
        if isinstance(value, _kael.dtype):
            return {"t": "dtype", "v": value.name}
        if isinstance(value, _kael.device):
            return {"t": "device", "v": str(value)}
        if isinstance(value, (list, tuple, dict)):
            return self.container(value, path)
        if hasattr(value, "tolist") and hasattr(value, "dtype") and hasattr(value, "shape"):
            return self.tensor(_kael.tensor(value))  # a numpy array is stored as a tensor
        raise TypeError(f"kael.save: {path} is a {type(value).__name__}; kael.save stores "
                        "tensors, numbers, strings, bytes, None, dtypes, devices and dicts, "
                        "lists and tuples of them")


def save(obj, f, format="kael"):
    """Saves obj (nested dicts, lists and tuples of tensors, numbers, strings, bytes and None)
    to f, a path or a binary file object, as one safetensors file.

    Tensors of any dtype and device are stored with their device and requires_grad; several
    references to one tensor (tied weights) are stored once and load as one tensor. A path is
    written beside itself and renamed over at the end, so a failed save leaves an older file
    whole. The file holds no code: kael.load never runs any.

    format="torch" writes PyTorch's checkpoint format instead (the zip torch.save writes), for
    torch.load; kael.load reads both, and reads torch.save's files of tensors and containers.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "state.kael")
        >>> kael.save({"weight": kael.ones(2, 3), "epoch": 3, "lr": [0.1, 0.01]}, path)
        >>> kael.load(path)["epoch"]
        3
    """
    if format == "torch":
        from . import _torch_format
        if isinstance(f, (str, bytes, os.PathLike)):
            with open(f, "wb") as file:
                _torch_format.save(obj, file)
        else:
            _torch_format.save(obj, f)
        return
    if format != "kael":
        raise ValueError(f"kael.save: format must be 'kael' or 'torch', got {format!r}")
    if _holds_module(obj):  # a whole model, as torch.save(model): pickled, in torch's format
        return save(obj, f, format="torch")
    encoder = _Encoder()
    structure = encoder.encode(obj, "obj")
    metadata = {_KEY: json.dumps({"format": _FORMAT, "object": structure}, separators=(",", ":"))}
    if isinstance(f, (str, bytes, os.PathLike)):
        save_file(encoder.tensors, f, metadata=metadata)
        return
    if not callable(getattr(f, "write", None)):
        raise TypeError(f"kael.save: f must be a path or a binary file object with write(), "
                        f"got {type(f).__name__}")
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "save.kael")
        save_file(encoder.tensors, path, metadata=metadata)
        with open(path, "rb") as file:
            f.write(file.read())


def _holds_module(obj, depth=0):
    if isinstance(obj, _kael._nn.Module):
        return True
    if depth < 8 and isinstance(obj, (list, tuple)):
        return any(_holds_module(item, depth + 1) for item in obj)
    if depth < 8 and isinstance(obj, dict):
        return any(_holds_module(item, depth + 1) for item in obj.values())
    return False


def _target_device(stored, map_location):
    if map_location is None:
        return stored
    if isinstance(map_location, dict):
        return str(map_location.get(stored, stored))
    if isinstance(map_location, (str, _kael.device)):
        return str(map_location)
    raise TypeError(f"kael.load: map_location must be None, a device, a device name or a dict "
                    f"of device names, not {type(map_location).__name__}")


class _Decoder:
    def __init__(self, file, map_location):
        self.file, self.map_location = file, map_location
        self.names = set(file.keys())
        self.loaded = {}

    def fail(self, message):
        raise ValueError(f"kael.load: the file's structure is broken: {message}")

    def tensor(self, node):
        name = node.get("name")
        if name not in self.names:
            self.fail(f"it names a tensor {name!r} the file does not hold")
        if name not in self.loaded:
            device = _target_device(str(node.get("device", "cpu")), self.map_location)
            if not _kael.is_available(device):
                _kael.require_device(device)  # raises with the plugin's reason
            value = self.file.get_tensor(name).to(device)
            if node.get("requires_grad"):
                value.requires_grad_(True)
            self.loaded[name] = value
        return self.loaded[name]

    def decode(self, node, depth=0):
        if depth > _MAX_DEPTH:
            self.fail(f"the structure nests deeper than {_MAX_DEPTH} levels")
        if not isinstance(node, dict) or not isinstance(node.get("t"), str):
            self.fail(f"{node!r:.80} is not a node")
        kind = node["t"]
        try:
            if kind == "none":
                return None
            if kind == "bool":
                return bool(node["v"])
            if kind == "int":
                return int(node["v"])
            if kind == "float":
                return float(node["v"])
            if kind == "str":
                return str(node["v"])
            if kind == "bytes":
                return base64.b64decode(node["v"], validate=True)
            if kind == "dtype":
                return {d.name: d for d in (_kael.float32, _kael.float64, _kael.int64,
                                            _kael.bool_)}[node["v"]]
            if kind == "device":
                return _kael.device(node["v"])
            if kind == "tensor":
                return self.tensor(node)
            if kind in ("list", "tuple"):
                items = [self.decode(item, depth + 1) for item in node["items"]]
                return items if kind == "list" else tuple(items)
            if kind == "dict":
                return {self.decode(key, depth + 1): self.decode(item, depth + 1)
                        for key, item in node["items"]}
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            if isinstance(error, ValueError) and str(error).startswith("kael.load"):
                raise
            self.fail(f"a {kind} node cannot be read ({error})")
        self.fail(f"unknown node type {kind!r}")


def load(f, map_location=None, weights_only=True, mmap=None):
    """Loads what kael.save wrote to f (a path or a binary file object), or a PyTorch
    checkpoint (torch.save's zip format: a state_dict, pytorch_model.bin, a training state),
    whose tensors and containers are rebuilt without PyTorch; any other object such a file
    pickles is refused (pickle.UnpicklingError), as torch.load(weights_only=True) does.

    Args:
        f: the path (str, bytes or os.PathLike) or a binary file object.
        map_location: None restores every tensor on the device it was saved from (a
            RuntimeError with the plugin's reason when that device is missing); a device or a
            device name puts all on it; a dict such as {"cuda:0": "cpu"} maps saved devices.
        weights_only: True (the default) never runs code: kael.save's files hold none, and a
            pickled file may rebuild only tensors and containers. False lets a pickled file (a
            whole model saved with kael.save(model) or torch.save(model)) rebuild any class:
            only for files you trust.

    A file that is not a kael.save file, or whose structure is broken, is a ValueError.

    Example:
        >>> import io
        >>> buffer = io.BytesIO()
        >>> kael.save([kael.arange(3), "note"], buffer)
        >>> kael.load(io.BytesIO(buffer.getvalue()), map_location="cpu")[1]
        'note'
    """
    del mmap
    from . import _torch_format
    trusted = weights_only is False
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "rb") as file:
            if _torch_format.is_torch_file(file.read(4)):
                file.seek(0)
                return _torch_format.load(file.read(), map_location, trusted)
    if not isinstance(f, (str, bytes, os.PathLike)):
        if not callable(getattr(f, "read", None)):
            raise TypeError(f"kael.load: f must be a path or a binary file object with read(), "
                            f"got {type(f).__name__}")
        data = f.read()
        if _torch_format.is_torch_file(data):
            return _torch_format.load(data, map_location, trusted)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "load.kael")
            with open(path, "wb") as file:
                file.write(data)
            return load(path, map_location)
    with safe_open(f) as file:
        text = file.metadata().get(_KEY)
        if text is None:
            raise ValueError(f"kael.load: {os.fsdecode(f)} is a safetensors file without "
                             "kael.save's structure; read it with kael.safetensors.load_file")
        try:
            header = json.loads(text)
        except RecursionError:
            raise ValueError(f"kael.load: the structure of {os.fsdecode(f)} nests too deeply "
                             "to read") from None
        except json.JSONDecodeError as error:
            raise ValueError(f"kael.load: the structure of {os.fsdecode(f)} is not JSON "
                             f"({error})") from None
        if not isinstance(header, dict) or header.get("format") != _FORMAT:
            raise ValueError(f"kael.load: {os.fsdecode(f)} has structure format "
                             f"{header.get('format') if isinstance(header, dict) else header!r}"
                             f", this kael reads format {_FORMAT}")
        return _Decoder(file, map_location).decode(header.get("object"))


def _rebuild_tensor(values, dtype, device, requires_grad):
    """Pickle's way back to a tensor (Tensor.__reduce_ex__)."""
    tensor = _kael.tensor(values, dtype=dtype).to(device)
    return tensor.requires_grad_(True) if requires_grad else tensor


def _reduce_tensor(self, protocol):
    values = self.detach().cpu().numpy().copy()
    return (_rebuild_tensor, (values, self.dtype, str(self.device), self.requires_grad))


def _deepcopy_tensor(self, memo):
    # Wrappers of one tensor (a tied weight read through two modules) are distinct Python
    # objects: the memo also knows the tensor itself, so the copy stays tied.
    key = ("kael.Tensor", hash(self))
    if key in memo:
        return memo[key]
    memo[key] = copy = _deepcopy_leaf(self, memo)
    return copy


def _deepcopy_leaf(self, memo):
    if not self.is_leaf:
        raise RuntimeError("Only tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol; copy a detached tensor instead")
    copy = self.detach().clone()
    if self.requires_grad:
        copy.requires_grad_(True)
    if self.grad is not None:
        copy.grad = self.grad.clone()
    memo[id(self)] = copy
    return copy


def _copy_tensor(self):
    """copy.copy: a new tensor object sharing self's memory, as PyTorch's."""
    copy = self.detach()
    return copy.requires_grad_(True) if self.requires_grad and self.is_leaf else copy


def install_tensor_copying():
    """Gives kael.Tensor pickling, copy.copy and copy.deepcopy."""
    _kael.Tensor.__reduce_ex__ = _reduce_tensor
    _kael.Tensor.__deepcopy__ = _deepcopy_tensor
    _kael.Tensor.__copy__ = _copy_tensor


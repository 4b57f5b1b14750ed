"""kael.safetensors: Hugging Face's safetensors files, with the names of its torch API.

    kael.safetensors.save_file({"weight": w}, "model.safetensors", metadata={"format": "kael"})
    tensors = kael.safetensors.load_file("model.safetensors")
    with kael.safetensors.safe_open("model.safetensors") as f:
        bias = f.get_tensor("bias")

Files are mapped and their headers checked whole before any tensor is read; a broken file is a
ValueError naming the file (and the tensor, where there is one). kael reads F32, F64, I64 and
BOOL as they are, F16 and BF16 as float32, and I32, I16, I8 and U8 as int64; other dtypes are a
TypeError when read. Module.save_safetensors / load_safetensors do the same for a model.
"""
from ._kael import _safetensors

safe_open = _safetensors.safe_open


def save_file(tensors, filename, metadata=None):
    """Writes tensors (dict of str -> Tensor, any device, dtype or layout) to filename.

    filename is str, bytes or os.PathLike; metadata, a dict of str -> str, is stored as the
    file's __metadata__. The file is written beside filename and renamed over it once complete,
    so a failed save (OSError) leaves an old file whole. The data follow the dict's order.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> kael.safetensors.save_file({"w": kael.ones(2)}, path, metadata={"format": "pt"})
    """
    _safetensors.save_file(tensors, filename, metadata)


def load_file(filename, device="cpu"):
    """Every tensor of a safetensors file, as a dict of name -> Tensor on device.

    The dict follows the order of the data in the file.

    Example:
        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
        >>> kael.safetensors.save_file({"w": kael.ones(2)}, path)
        >>> kael.safetensors.load_file(path)["w"].tolist()
        [1.0, 1.0]
    """
    with safe_open(filename, device=device) as f:
        return {name: f.get_tensor(name) for name in f.keys()}

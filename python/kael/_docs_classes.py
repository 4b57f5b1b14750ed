"""Docstrings of kael's classes from the extension (device, dtype, DeviceGraph, Record, the
tokenizer, safe_open, autograd functions), attached at import."""
from . import _kael
from ._kael import _add_docstr


def _doc(owner, name, signature, text):
    member = vars(owner)[name] if owner is not None else name
    _add_docstr(member, f"{signature}\n--\n\n{text.strip()}\n" if signature else text.strip())


_add_docstr(_kael.device, """
A device: a type name that a plugin brought ("cpu", "cuda", a third party's "toy") and an index.

Example:

    >>> kael.device("cpu:0")
    >>> kael.device("cpu", 0).index
""")
_doc(_kael.device, "__init__", "__init__(self, type, index=None)",
     "kael.device('cuda:1'), kael.device('cuda', 1) or kael.device('cpu'); ValueError for a "
     "type no loaded plugin registered, listing the valid names.")
_doc(_kael.device, "type", "", "The device-type name ('cpu', 'cuda', ...).")
_doc(_kael.device, "index", "", "The device's index among those of its type.")
_add_docstr(_kael.dtype, """
An element type: kael.float32 (kael.float), kael.float64 (kael.double), kael.int64
(kael.long) or kael.bool.

Example:

    >>> kael.ones(2, dtype=kael.float64).dtype
    >>> kael.float32.is_floating_point
""")
_doc(_kael.dtype, "__init__", "__init__(self, value)",
     "The dtype of the given enum value (use the kael.float32, ... objects instead).")
_doc(_kael.dtype, "name", "", "The dtype's name: 'float32', 'float64', 'int64' or 'bool'.")
_doc(_kael.dtype, "value", "", "The dtype's value in the plugin ABI (KAEL_DTYPE_*).")
_doc(_kael.dtype, "itemsize", "", "The size of one element in bytes.")
_doc(_kael.dtype, "is_floating_point", "", "True for float32 and float64.")

_add_docstr(_kael.DeviceGraph, """
Device work recorded once and replayed with one launch (CUDA graphs on the cuda plugin, a
replayed list of calls elsewhere), like torch.cuda.CUDAGraph: record a function of tensors
whose shapes stay fixed, then replay it after writing new values into its inputs.

Example:

    >>> x = kael.ones(4)
    >>> graph = kael.DeviceGraph.record("cpu", lambda: x.mul(2.0)) if kael.DeviceGraph.supported("cpu") else None
""")
_doc(_kael.DeviceGraph, "record", "record(device, work)",
     "Runs work() once on device while recording its device calls, and returns the graph.")
_doc(_kael.DeviceGraph, "replay", "replay(self)",
     "Queues the recorded calls again, on the same memory.")
_doc(_kael.DeviceGraph, "supported", "supported(device)",
     "True if device's plugin can record graphs.")
_doc(_kael.DeviceGraph, "device", "", "The device the graph runs on.")

_add_docstr(_kael.Record, """
A status record of a plugin or a device (the fields of kael-info --json), read as attributes
(record.name, record.status, record.reason) or as a dict.

Example:

    >>> record = kael.plugins()[0]
    >>> sorted(record.keys())[:3]
""")
_doc(_kael.Record, "keys", "keys(self)", "The record's field names.")
_doc(_kael.Record, "to_dict", "to_dict(self)", "The record as a dict of its fields.")

_tokenizer = _kael.GPT2Tokenizer
_add_docstr(_tokenizer, (_tokenizer.__doc__ or "") + """

Example:

    >>> tokenizer = kael.GPT2Tokenizer.from_pretrained()
    >>> tokenizer.encode("Hello world")
    [15496, 995]
""")
_doc(_tokenizer, "from_pretrained", "from_pretrained(folder=None)",
     "The tokenizer of a checkpoint folder (its vocab.json + merges.txt, or encoder.json + "
     "vocab.bpe), or of the copy installed with kael when folder is None or has no vocabulary.")
_doc(_tokenizer, "from_files", "from_files(vocab, merges)",
     "The tokenizer of a vocabulary (encoder.json or vocab.json) and a merges file (vocab.bpe "
     "or merges.txt).")
_doc(_tokenizer, "encode", "encode(self, text, allow_special=False)",
     "Token ids of text (str, or bytes: invalid UTF-8 reads as U+FFFD). With allow_special, "
     "'<|endoftext|>' is eos_token_id; without it, it is encoded as plain text.")
_doc(_tokenizer, "decode", "decode(self, ids)",
     "The text of a sequence of ids; bytes that are not UTF-8 become U+FFFD. ValueError names "
     "an id outside the vocabulary.")
_doc(_tokenizer, "token_bytes", "token_bytes(self, id)",
     "The raw bytes of one token (may be part of a UTF-8 character).")
_stream = _kael.TokenTextStream
_doc(_stream, "__init__", "__init__(self, tokenizer)", "A stream over tokenizer's vocabulary.")
_doc(_stream, "push", "push(self, id)",
     "The text this token completes (often '' inside a split character).")
_doc(_stream, "finish", "finish(self)",
     "What is held back (an unfinished character as U+FFFD); the stream starts afresh.")
_add_docstr(_stream, (_stream.__doc__ or "") + """

Example:

    >>> stream = kael.TokenTextStream(kael.GPT2Tokenizer.from_pretrained())
    >>> [stream.push(i) for i in [15496, 995]]
    ['Hello', ' world']
""")

_open = _kael._safetensors.safe_open
_add_docstr(_open, """
A safetensors file opened for reading single tensors (memory-mapped), as safetensors.safe_open.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> kael.safetensors.save_file({"w": kael.ones(2)}, path)
    >>> with kael.safetensors.safe_open(path) as f:
    ...     f.keys()
    ['w']
""")
_doc(_open, "__init__", "__init__(self, filename, device='cpu')",
     "Opens a safetensors file (memory-mapped; the header is checked whole first, a broken "
     "file is a ValueError) whose tensors get_tensor reads onto device.")
_doc(_open, "get_tensor", "get_tensor(self, name)", "The tensor stored under name.")
_doc(_open, "keys", "keys(self)", "The names of the stored tensors, in file order.")
_doc(_open, "metadata", "metadata(self)", "The file's __metadata__ string map.")
_doc(_open, "close", "close(self)", "Releases the mapping (also done by with-blocks).")

_doc(None, _kael._autograd.backward, "backward(tensor, gradient=None, retain_graph=False)",
     """
Computes the gradients of tensor with respect to the leaves that require grad and adds them to
their .grad, as tensor.backward(gradient).

Example:

    >>> x = kael.tensor([1.0, 2.0], requires_grad=True)
    >>> kael.autograd.backward((x * x).sum())
    >>> x.grad
""")
_doc(None, _kael._autograd.gradcheck,
     "gradcheck(function, inputs, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True)", """
Compares backward's gradients of function at inputs (f64 tensors) with central finite differences;
returns True, or raises ValueError naming the worst element (False without raise_exception).

Example:

    >>> x = kael.rand(3, dtype=kael.float64, requires_grad=True)
    >>> kael.autograd.gradcheck(lambda t: (t * t).sum(), [x])
    True
""")

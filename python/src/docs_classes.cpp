// The docstrings of kael's classes other than Tensor and of their members (docs_table.h's
// add_class_docs): device and dtype, DeviceGraph and Record (bind_devices.cpp), the tokenizer
// (bind_tokenizer.cpp), safe_open (bind_safetensors.cpp) and kael.autograd's functions
// (bind_autograd.cpp), keyed "device", "device.type", "autograd.backward".
#include "docs_table.h"

namespace kael::python::docs {
namespace {

void add_devices_and_dtypes(Docs& docs) {
    docs["device"] = R"doc(A device: a type name that a plugin brought ("cpu", "cuda", a third party's "toy") and an index.

Example:

    >>> kael.device("cpu:0")
    >>> kael.device("cpu", 0).index)doc";
    docs["device.__init__"] = documented(
        "__init__(self, type, index=None)",
        "kael.device('cuda:1'), kael.device('cuda', 1) or kael.device('cpu'); ValueError for a "
        "type no loaded plugin registered, listing the valid names.");
    docs["device.type"] = "The device-type name ('cpu', 'cuda', ...).";
    docs["device.index"] = "The device's index among those of its type.";
    docs["dtype"] = R"doc(An element type: kael.float32 (kael.float), kael.float64 (kael.double), kael.bfloat16,
kael.float16 (kael.half), kael.int64 (kael.long), kael.int32 (kael.int), kael.int16
(kael.short), kael.int8, kael.uint8 or kael.bool. bfloat16 and float16 are stored in two bytes
and computed in float32 (results rounded once), as PyTorch computes them; the narrow integers
are computed in int64 and wrap around when stored, as PyTorch's integer arithmetic does.

Example:

    >>> kael.ones(2, dtype=kael.float64).dtype
    >>> kael.float32.is_floating_point)doc";
    docs["dtype.__init__"] = documented(
        "__init__(self, value)",
        "The dtype of the given enum value (use the kael.float32, ... objects instead).");
    docs["dtype.name"] = "The dtype's short name: 'f32', 'f64', 'bf16', 'f16', 'i64' or 'bool'.";
    docs["dtype.value"] = "The dtype's value in the plugin ABI (KAEL_DTYPE_*).";
    docs["dtype.itemsize"] = "The size of one element in bytes.";
    docs["dtype.is_floating_point"] = "True for float32, float64, bfloat16 and float16.";
    docs["dtype.is_signed"] = "False for uint8 and bool, True for every other dtype.";
}

void add_graphs_and_records(Docs& docs) {
    docs["DeviceGraph"] = R"doc(Device work recorded once and replayed with one launch (CUDA graphs on the cuda plugin, a
replayed list of calls elsewhere), like torch.cuda.CUDAGraph: record a function of tensors
whose shapes stay fixed, then replay it after writing new values into its inputs.

Example:

    >>> x = kael.ones(4)
    >>> graph = kael.DeviceGraph.record("cpu", lambda: x.mul(2.0)) if kael.DeviceGraph.supported("cpu") else None)doc";
    docs["DeviceGraph.record"] = documented(
        "record(device, work)",
        "Runs work() once on device while recording its device calls, and returns the graph: "
        "tensors it makes get their values at each replay(); item(), tolist() and printing "
        "inside raise.");
    docs["DeviceGraph.replay"] =
        documented("replay(self)", "Queues the recorded calls again, on the same memory.");
    docs["DeviceGraph.supported"] =
        documented("supported(device)", "True if device's plugin can record graphs.");
    docs["DeviceGraph.device"] = "The device the graph runs on.";
    docs["DeviceGraph.recording"] = documented(
        "recording()",
        "True while this thread is inside DeviceGraph.record (as torch.cuda."
        "is_current_stream_capturing): code that would read host state, such as an "
        "optimizer's step count, must keep it on the device instead.");
    docs["Record"] = R"doc(A status record of a plugin or a device (the fields of kael-info --json), read as attributes
(record.name, record.status, record.reason) or as a dict.

Example:

    >>> record = kael.plugins()[0]
    >>> sorted(record.keys())[:3])doc";
    docs["Record.keys"] = documented("keys(self)", "The record's field names.");
    docs["Record.to_dict"] = documented("to_dict(self)", "The record as a dict of its fields.");
}

void add_tokenizer(Docs& docs) {
    docs["GPT2Tokenizer"] = R"doc(GPT-2's byte-level BPE tokenizer.

Gives the ids of OpenAI's GPT-2 encoder (and of the gpt-3-encoder JavaScript package):

    tok = kael.GPT2Tokenizer.from_pretrained()   # the copy installed with kael
    tok.encode("Hello world")                    # [15496, 995]
    tok.decode([15496, 995])                     # 'Hello world'

Immutable and safe to share between threads; encode and decode release the GIL.

Example:

    >>> tokenizer = kael.GPT2Tokenizer.from_pretrained()
    >>> tokenizer.encode("Hello world")
    [15496, 995])doc";
    docs["GPT2Tokenizer.from_pretrained"] = documented(
        "from_pretrained(folder=None)",
        "The tokenizer of a checkpoint folder (its vocab.json + merges.txt, as Hugging Face "
        "saves them, or encoder.json + vocab.bpe), or of the copy installed with kael "
        "($KAEL_GPT2_VOCAB_DIR first, when set) when folder is None.");
    docs["GPT2Tokenizer.from_files"] = documented(
        "from_files(vocab, merges)",
        "The tokenizer of a vocabulary (encoder.json or vocab.json: token -> id) and a merges "
        "file (vocab.bpe or merges.txt). ValueError names the file and line of a corrupt entry; "
        "a missing file raises FileNotFoundError.");
    docs["GPT2Tokenizer.encode"] = documented(
        "encode(self, text, allow_special=True)",
        "Token ids of text (str, or bytes: invalid UTF-8 reads as U+FFFD). With allow_special, "
        "'<|endoftext|>' is eos_token_id; without it, it is encoded as plain text.");
    docs["GPT2Tokenizer.decode"] = documented(
        "decode(self, ids)",
        "The text of a sequence of ids; bytes that are not UTF-8 become U+FFFD (as JS "
        "TextDecoder). ValueError names an id outside the vocabulary.");
    docs["GPT2Tokenizer.token_bytes"] = documented(
        "token_bytes(self, id)", "The raw bytes of one token (may be part of a UTF-8 character).");
    docs["TokenTextStream"] = R"doc(Text of ids as they arrive.

push(id) returns the text completed by that token, holding back the bytes of a character split
across tokens, so a generator can print each token as it comes; finish() returns what is left.
The pieces joined equal tokenizer.decode(ids).

Example:

    >>> stream = kael.TokenTextStream(kael.GPT2Tokenizer.from_pretrained())
    >>> [stream.push(i) for i in [15496, 995]]
    ['Hello', ' world'])doc";
    docs["TokenTextStream.__init__"] =
        documented("__init__(self, tokenizer)", "A stream over tokenizer's vocabulary.");
    docs["TokenTextStream.push"] = documented(
        "push(self, id)", "The text this token completes (often '' inside a split character).");
    docs["TokenTextStream.finish"] = documented(
        "finish(self)",
        "What is held back (an unfinished character as U+FFFD); the stream starts afresh.");
}

void add_safetensors(Docs& docs) {
    docs["safe_open"] = R"doc(A safetensors file opened for reading single tensors (memory-mapped), as safetensors.safe_open.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> kael.safetensors.save_file({"w": kael.ones(2)}, path)
    >>> with kael.safetensors.safe_open(path) as f:
    ...     f.keys()
    ['w'])doc";
    docs["safe_open.__init__"] = documented(
        "__init__(self, filename, device='cpu')",
        "Opens a safetensors file (memory-mapped; the header is checked whole first, a broken "
        "file is a ValueError) whose tensors get_tensor reads onto device.");
    docs["safe_open.get_tensor"] = documented(
        "get_tensor(self, name)",
        "The tensor stored under name, new on the device given to safe_open: F16 and BF16 as "
        "float32, narrower integers as int64; ValueError for a name the file lacks.");
    docs["safe_open.keys"] = documented(
        "keys(self)", "The names of the stored tensors, in the order of their data in the file.");
    docs["safe_open.metadata"] = documented(
        "metadata(self)", "The file's __metadata__ string map (empty when it has none).");
    docs["safe_open.close"] = documented(
        "close(self)", "Releases the mapping (also done by with-blocks); later calls raise "
                       "ValueError.");
}

void add_autograd(Docs& docs) {
    docs["autograd.backward"] =
        documented("backward(tensor, gradient=None, retain_graph=False)", R"doc(Computes the gradients of tensor with respect to the leaves that require grad and adds them to
their .grad, as tensor.backward(gradient).

Example:

    >>> x = kael.tensor([1.0, 2.0], requires_grad=True)
    >>> kael.autograd.backward((x * x).sum())
    >>> x.grad)doc");
    docs["autograd.gradcheck"] = documented(
        "gradcheck(function, inputs, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True)",
        R"doc(Compares backward's gradients of function at inputs (f64 tensors) with central finite differences;
returns True, or raises ValueError naming the worst element (False without raise_exception).

Example:

    >>> x = kael.rand(3, dtype=kael.float64, requires_grad=True)
    >>> kael.autograd.gradcheck(lambda t: (t * t).sum(), [x])
    True)doc");
}

}  // namespace

void add_class_docs(Docs& docs) {
    add_devices_and_dtypes(docs);
    add_graphs_and_records(docs);
    add_tokenizer(docs);
    add_safetensors(docs);
    add_autograd(docs);
}

}  // namespace kael::python::docs

// The docstrings of kael's module-level functions (docs_functions.h). Families whose texts differ
// in a few words (the reductions, the factories, softmax and log_softmax, cat and stack,
// scatter_add and its in-place form) are composed from one template each.
#include "docs_functions.h"

#include <functional>
#include <map>
#include <string>

namespace kael::python::docs::functions {
namespace {

constexpr const char* kDeferredIndex = R"doc(An index outside the dim is an IndexError naming this op. On cuda, as on any GPU, the device
finds it after the call returns: the error is raised at the next call that waits for the
device (item(), tolist(), numpy(), kael.synchronize()), in whichever thread makes it, and its
message names the thread that issued the op.)doc";

using Docs = std::map<std::string, std::string, std::less<>>;

// A text signature, then the text (inspect.signature reads the first line).
std::string documented(const std::string& signature, const std::string& text) {
    return signature + "\n--\n\n" + text + "\n";
}

struct Reduction {
    const char* name;
    const char* summary;
    const char* dtype_note;
    const char* values;  // the example's input
};

constexpr Reduction kReductions[] = {
    {"sum", "The sum of the elements", "integers and bool sum to int64",
     "[[1.0, 2.0], [3.0, 4.0]]"},
    {"mean", "The mean of the elements", "floating dtypes only", "[[1.0, 2.0], [3.0, 4.0]]"},
    {"prod", "The product of the elements", "integers and bool multiply to int64",
     "[[1.0, 2.0], [3.0, 4.0]]"},
    {"argmax",
     "The index of the largest element (the first one on ties, NaN counts as largest)",
     "int64 result; over the flattened tensor without dim", "[[1.0, 5.0], [3.0, 4.0]]"},
    {"argmin", "The index of the smallest element (the first one on ties)",
     "int64 result; over the flattened tensor without dim", "[[1.0, 5.0], [3.0, 4.0]]"},
    {"all", "True if every element is nonzero", "bool result", "[[True, False], [True, True]]"},
    {"any", "True if some element is nonzero", "bool result", "[[True, False], [False, False]]"},
};

void add_reductions(Docs& docs) {
    for (const Reduction& r : kReductions) {
        const std::string name = r.name;
        const bool differentiable = name == "sum" || name == "mean" || name == "prod";
        docs[name] = documented(
            name + "(input, dim=None, keepdim=False)",
            std::string(r.summary) + R"doc(, over all of input or over dim.

Args:
    input (Tensor): any shape, dtype and device ()doc" +
                r.dtype_note + R"doc().
    dim (int or tuple of ints, optional): the dimensions reduced; None reduces all of them.
    keepdim (bool): keep reduced dimensions with size 1.

Returns a tensor on input's device)doc" +
                (differentiable ? ", differentiable" : "") + R"doc(.

Example:

    >>> x = kael.tensor()doc" + r.values + ")\n    >>> kael." + name + "(x)\n    >>> kael." +
                name + "(x, dim=1)");
    }
}

void add_factories(Docs& docs) {
    const char* const factories[][3] = {
        {"zeros", "A tensor filled with 0.", "kael.zeros(2, 3)"},
        {"ones", "A tensor filled with 1.", "kael.ones((2, 3), dtype=kael.int64)"},
        {"empty",
         "A tensor of the given shape whose values are not set (read them only after writing "
         "them).",
         "kael.empty(2, 3).shape"},
    };
    for (const auto& [name, summary, example] : factories) {
        docs[name] = documented(std::string(name) +
                                    "(*size, dtype=None, device=None, requires_grad=False)",
                                std::string(summary) + R"doc(

Args:
    *size (ints, or one tuple or list of ints): the shape; () or nothing gives a 0-d tensor.
    dtype (kael.dtype, optional): float32 by default (any dtype).
    device (str or kael.device, optional): "cpu" by default; "cuda", "cuda:1", ...
    requires_grad (bool): make the result a leaf that records gradients.

Example:

    >>> )doc" + example);
    }
}

// softmax and log_softmax; cat and stack; scatter_add and scatter_add_.
void add_pairs(Docs& docs) {
    for (const auto& [name, summary] : {std::pair<std::string, std::string>{
                                            "softmax", "exp(x) / sum(exp(x))"},
                                        {"log_softmax", "x - logsumexp(x)"}}) {
        docs[name] = documented(name + "(input, dim)", summary + R"doc( along dim, computed in one fused kernel per row where the device has it.

Args:
    input (Tensor): f32 or f64, any shape and device; dim (int): the dimension normalised.

Returns a differentiable tensor of input's shape.

Example:

    >>> kael.)doc" + name + "(kael.tensor([[1.0, 2.0, 3.0]]), dim=1)");
    }
    for (const auto& [name, summary] :
         {std::pair<std::string, std::string>{
              "cat", "joined end to end along the existing dimension dim"},
          {"stack", "stacked along a new dimension dim"}}) {
        docs[name] = documented(name + "(tensors, dim=0)", "The tensors " + summary + R"doc(.

Args:
    tensors (sequence of Tensor): one dtype and device; shapes equal except)doc" +
                                                               (name == "cat" ? " along dim" : "") + R"doc(.
    dim (int): the dimension.

Returns a differentiable tensor.

Example:

    >>> a = kael.tensor([1, 2]); b = kael.tensor([3, 4])
    >>> kael.)doc" + name + "([a, b])");
    }
    for (const bool in_place : {false, true}) {
        const std::string name = in_place ? "scatter_add_" : "scatter_add";
        docs[name] = documented(
            name + "(input, dim, index, src)",
            std::string(in_place ? "Adds, in place," : "A copy of input with") +
                " src's values " + (in_place ? "" : "added ") +
                R"doc(at the positions index gives along dim (duplicates accumulate).

Args:
    input (Tensor), dim (int), index (Tensor): int64 of src's shape, src (Tensor).

)doc" + kDeferredIndex + "\n\nExample:\n\n    >>> kael." + name +
                "(kael.zeros(3), 0, kael.tensor([0, 0, 2]), kael.tensor([1.0, 2.0, 3.0]))");
    }
}

// The device, plugin, allocator and interchange functions (bind_devices.cpp, bind_dlpack.cpp).
void add_devices(Docs& docs) {
    docs["from_dlpack"] = documented("from_dlpack(source)", R"doc(A tensor sharing the memory of any DLPack producer (numpy arrays, PyTorch tensors, ...), zero
copy; the producer's device must be one kael has a plugin for.

Example:

    >>> import numpy as np
    >>> kael.from_dlpack(np.arange(3.0)))doc");
    docs["promote_types"] = documented("promote_types(type1, type2)", R"doc(The dtype two tensors of these dtypes promote to in an operation, as PyTorch's table.

Example:

    >>> kael.promote_types(kael.int64, kael.float32))doc");
    docs["devices"] = documented("devices()", R"doc(Every device the loaded plugins serve, as records (device name, plugin, kind, memory, whether
emulated), in the order kael prefers them.

Example:

    >>> [record.device for record in kael.devices()][0])doc");
    docs["plugins"] = documented("plugins()", R"doc(A status record for every plugin candidate kael found: name, path, status ('loaded',
'no devices', 'incompatible ABI', 'load error', 'disabled', ...) and the reason, as kael-info
shows them.

Example:

    >>> "cpu" in [plugin.name for plugin in kael.plugins()])doc");
    docs["is_available"] = documented("is_available(device)", R"doc(True if device ("cpu", "cuda", "cuda:1", a kael.device) is served by a loaded plugin.

Example:

    >>> kael.is_available("cpu"))doc");
    docs["require_device"] = documented("require_device(device)", R"doc(Returns if device is usable, else raises RuntimeError with the reason (the plugin's status and
the driver's message), as an explicit request for a missing device does.

Example:

    >>> kael.require_device("cpu"))doc");
    docs["cuda_is_available"] = documented("cuda_is_available()", R"doc(True if some plugin serves a cuda device (the emulated plugin counts; kael.devices() says which).

Example:

    >>> isinstance(kael.cuda_is_available(), bool))doc");
    docs["synchronize"] = documented("synchronize(device=None)", R"doc(Waits until all work queued on device (every device when None) has finished, and raises the
first asynchronous error a kernel recorded, naming its op.

Example:

    >>> kael.synchronize("cpu"))doc");
    docs["add_plugin_folder"] = documented("add_plugin_folder(folder, origin='api')", R"doc(Searches folder for plugins before the default places, for the next discovery (call it before
the first use of a device, or follow with kael.load_plugin_folder). origin is what
kael.discovery_steps() and kael.plugins() show as the folder's origin; `import kael` gives the
folder of each installed "kael.plugins" entry point this way, labelled "entry point <module>
(<distribution> <version>)".

Example:

    >>> kael.add_plugin_folder("/opt/vendor/kael-plugins"))doc");
    docs["load_plugin_folder"] = documented("load_plugin_folder(folder, origin='api')", R"doc(Loads the plugins of folder now and returns their status records (a third party's device
appears without restarting); origin labels the folder as in kael.add_plugin_folder.

Example:

    >>> kael.load_plugin_folder("/nonexistent"))doc");
    docs["set_device_plugin"] = documented("set_device_plugin(device_type, plugin)", R"doc(Makes plugin (by name) serve device_type, over the ranking kael chose (say, the emulated plugin
for cuda on a machine with a GPU).

Example:

    >>> kael.set_device_plugin("cpu", "cpu"))doc");
    docs["registered_device_types"] = documented("registered_device_types()", R"doc(The device-type names the loaded plugins brought ("cpu", "cuda", a third party's "toy", ...).

Example:

    >>> "cpu" in kael.registered_device_types())doc");
    docs["device_type_servers"] = documented("device_type_servers()", R"doc(For each device type, the plugins that can serve it in rank order and the one chosen.

Example:

    >>> isinstance(kael.device_type_servers(), list))doc");
    docs["discovery_steps"] = documented("discovery_steps()", R"doc(The folders plugin discovery searched, in order, with where each came from (the API, an
installed distribution's "kael.plugins" entry point, KAEL_PLUGIN_PATH, the folder beside
libkael_core), as kael-info --verbose shows.

Example:

    >>> isinstance(kael.discovery_steps(), list))doc");
    docs["plugin_warnings"] = documented("plugin_warnings()", R"doc(Warnings discovery produced (a plugin that failed to load, a duplicate), as strings.

Example:

    >>> isinstance(kael.plugin_warnings(), list))doc");
    docs["fallback_counts"] = documented("fallback_counts()", R"doc(How many calls each op made through the cpu fallback (a plugin that answered UNSUPPORTED runs
the call on cpu through copies), keyed by op name: a fast path that is not taken shows here.

Example:

    >>> isinstance(kael.fallback_counts(), dict))doc");
    docs["reset_fallback_counts"] = documented("reset_fallback_counts()", R"doc(Sets every count of kael.fallback_counts() back to zero.

Example:

    >>> kael.reset_fallback_counts())doc");
    docs["allocator_stats"] = documented("allocator_stats(device='cpu')", R"doc(The caching allocator's figures for device: bytes in use and reserved, peaks, allocations,
cache hits, as a dict.

Example:

    >>> "allocated_bytes" in kael.allocator_stats() or True)doc");
    docs["empty_cache"] = documented("empty_cache(device='cpu')", R"doc(Returns the caching allocator's unused blocks on device to the device (memory in use stays).

Example:

    >>> kael.empty_cache())doc");
    docs["caching_allocator_enabled"] = documented("caching_allocator_enabled()", R"doc(True unless KAEL_CACHING_ALLOCATOR=0 turned the caching allocator off for this process.

Example:

    >>> isinstance(kael.caching_allocator_enabled(), bool))doc");
    docs["get_num_threads"] = documented("get_num_threads()", R"doc(The number of threads of the cpu plugin's pool (KAEL_NUM_THREADS, else the machine's cores).

Example:

    >>> kael.get_num_threads() >= 1)doc");
    docs["set_num_threads"] = documented("set_num_threads(count)", R"doc(Resizes the cpu plugin's thread pool (and tells OpenBLAS to match) at run time.

Example:

    >>> kael.set_num_threads(kael.get_num_threads()))doc");
    docs["core_version"] = documented("core_version()", R"doc(The version of libkael_core, as kael.__version__.

Example:

    >>> kael.core_version() == kael.__version__)doc");
    docs["core_abi_version"] = documented("core_abi_version()", R"doc(The plugin ABI version the core was built with, "major.minor"; a plugin must match the major.

Example:

    >>> kael.core_abi_version().count("."))doc");
    docs["is_grad_enabled"] = documented("is_grad_enabled()", R"doc(True unless inside kael.no_grad() (or set_grad_enabled(False)): whether ops record autograd.

Example:

    >>> kael.is_grad_enabled())doc");
}

Docs make_docs() {
    Docs docs;
    add_reductions(docs);
    add_factories(docs);
    add_pairs(docs);
    add_devices(docs);
    docs["tensor"] = documented("tensor(data, *, dtype=None, device=None, requires_grad=False)", R"doc(A new tensor holding a copy of data.

Args:
    data: a number, a (nested) list or tuple of numbers or tensors, a numpy array, or a tensor.
        The dtype is inferred as PyTorch does: bools give bool, ints int64, floats float32
        (a numpy array keeps its dtype where kael has it: float64 stays float64).
    dtype (kael.dtype, optional), device (str or kael.device, optional), requires_grad (bool).

Example:

    >>> kael.tensor([[1, 2], [3, 4]])
    >>> kael.tensor(2.5, dtype=kael.float64))doc");
    docs["full"] = documented("full(size, fill_value, *, dtype=None, device=None, requires_grad=False)", R"doc(A tensor of shape size filled with fill_value.

Args:
    size (tuple or list of ints): the shape.
    fill_value (number): the value; the dtype is inferred from it (bool, int64 or float32)
        unless dtype is given.
    dtype, device, requires_grad: as for kael.zeros.

Example:

    >>> kael.full((2, 2), 7))doc");
    docs["arange"] = documented("arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False)", R"doc(The values start, start + step, ... below end (above end for a negative step), as a 1-D tensor;
arange(n) counts 0..n-1.

Args:
    start, end, step (numbers): int64 when all are integers, float32 otherwise (dtype overrides).
    dtype, device, requires_grad: as for kael.zeros.

Example:

    >>> kael.arange(5)
    >>> kael.arange(0, 1, 0.25))doc");
    docs["matmul"] = documented("matmul(input, other)", R"doc(The matrix product, with PyTorch's rules: 1-D by 1-D is a dot product, 2-D by 2-D a matrix
product, and leading dimensions of higher-rank operands broadcast as batches.

Args:
    input (Tensor), other (Tensor): f32 or f64 (int64 too), on one device; the inner sizes must
        agree (ValueError naming both shapes otherwise).

Returns a differentiable tensor. Also written input @ other.

Example:

    >>> a = kael.ones(2, 3); b = kael.ones(3, 4)
    >>> kael.matmul(a, b).shape)doc");
    docs["where"] = documented("where(condition, input, other)", R"doc(input where condition is True, other elsewhere, broadcasting all three.

Args:
    condition (Tensor): bool.
    input, other (Tensor or number): the values; they promote to one dtype.

Returns a tensor differentiable in input and other.

Example:

    >>> x = kael.tensor([-1.0, 2.0, -3.0])
    >>> kael.where(x > 0, x, 0.0))doc");
    docs["clamp"] = documented("clamp(input, min=None, max=None)", R"doc(Each element limited to [min, max] (either bound may be None); NaN stays NaN.

Args:
    input (Tensor): any dtype but bool.
    min, max (number, optional): the bounds.

Returns a tensor differentiable where the input lies inside the bounds.

Example:

    >>> kael.clamp(kael.tensor([-2.0, 0.5, 3.0]), min=-1, max=1))doc");
    docs["masked_fill"] = documented("masked_fill(input, mask, value)", R"doc(A copy of input with value wherever mask is True (mask broadcasts to input).

Args:
    input (Tensor), mask (Tensor): bool, broadcastable to input, value (number).

Example:

    >>> x = kael.zeros(3)
    >>> kael.masked_fill(x, kael.tensor([True, False, True]), 5.0))doc");
    docs["allclose"] = documented("allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)", R"doc(True if |input - other| <= atol + rtol * |other| everywhere (a Python bool: waits for the device).

Args:
    input (Tensor), other (Tensor): broadcastable, on one device.
    rtol, atol (float): tolerances; equal_nan (bool): NaNs in the same places count as equal.

Example:

    >>> kael.allclose(kael.tensor([1.0, 2.0]), kael.tensor([1.0, 2.0000001])))doc");
    docs["logsumexp"] = documented("logsumexp(input, dim, keepdim=False)", R"doc(log(sum(exp(input))) along dim, computed without overflow (the row maximum is taken out first).

Args:
    input (Tensor): f32 or f64; dim (int or tuple of ints: every listed dim is reduced);
    keepdim (bool).

Returns a differentiable tensor.

Example:

    >>> kael.logsumexp(kael.tensor([[0.0, 0.0]]), dim=1))doc");
    docs["gelu"] = documented("gelu(input, approximate='none')", R"doc(The Gaussian error linear unit x * Phi(x); approximate='tanh' uses GPT-2's tanh form.

Args:
    input (Tensor): f32 or f64; approximate (str): 'none' or 'tanh'.

Returns a differentiable tensor.

Example:

    >>> kael.gelu(kael.tensor([-1.0, 0.0, 1.0])))doc");
    docs["cumsum"] = documented("cumsum(input, dim)", R"doc(The running sum along dim: element i is the sum of elements 0..i.

Args:
    input (Tensor): any dtype (integers and bool sum to int64); dim (int).

Returns a differentiable tensor of input's shape.

Example:

    >>> kael.cumsum(kael.tensor([1, 2, 3, 4]), dim=0))doc");
    docs["sort"] = documented("sort(input, dim=-1, descending=False)", R"doc(input sorted along dim (stably: equal elements keep their order), as the named tuple
(values, indices).

Args:
    input (Tensor): any dtype; NaN sorts last (first when descending), as PyTorch.
    dim (int), descending (bool).

Example:

    >>> values, indices = kael.sort(kael.tensor([3.0, 1.0, 2.0]))
    >>> values, indices)doc");
    docs["argsort"] = documented("argsort(input, dim=-1, descending=False)", R"doc(The indices that sort input along dim (stably), int64.

Args:
    input (Tensor), dim (int), descending (bool).

Example:

    >>> kael.argsort(kael.tensor([3.0, 1.0, 2.0])))doc");
    docs["topk"] = documented("topk(input, k, dim=-1, largest=True)", R"doc(The k largest (or smallest) elements along dim, as the named tuple (values, indices), sorted.

Args:
    input (Tensor), k (int): 0 <= k <= input.size(dim), dim (int), largest (bool).

Example:

    >>> kael.topk(kael.tensor([1.0, 5.0, 3.0, 4.0]), 2))doc");
    docs["split"] = documented("split(input, split_size_or_sections, dim=0)", R"doc(Views of input in pieces along dim: of split_size each (the last may be smaller), or of the
given list of sizes.

Args:
    input (Tensor); split_size_or_sections (int or list of ints); dim (int).

Returns a tuple of views.

Example:

    >>> kael.split(kael.arange(5), 2))doc");
    docs["chunk"] = documented("chunk(input, chunks, dim=0)", R"doc(input split into at most chunks views of equal size along dim (the last may be smaller).

Args:
    input (Tensor), chunks (int) > 0, dim (int).

Example:

    >>> kael.chunk(kael.arange(6), 3))doc");
    docs["gather"] = documented("gather(input, dim, index)", std::string(R"doc(out[i][j] = input[index[i][j]][j] for dim 0 (and likewise for other dims): values picked along
dim by an int64 index of input's rank.

Args:
    input (Tensor), dim (int), index (Tensor): int64, each entry in [0, input.size(dim)).

Returns a tensor of index's shape, differentiable in input.

)doc") + kDeferredIndex +
                                                   R"doc(

Example:

    >>> x = kael.tensor([[1, 2], [3, 4]])
    >>> kael.gather(x, 1, kael.tensor([[1], [0]])))doc");
    docs["index_select"] = documented("index_select(input, dim, index)", std::string(R"doc(The slices of input along dim at the positions of a 1-D int64 index.

Args:
    input (Tensor), dim (int), index (Tensor): 1-D int64 in [0, input.size(dim)).

Returns a new, differentiable tensor.

)doc") + kDeferredIndex +
                                                   R"doc(

Example:

    >>> kael.index_select(kael.tensor([[1, 2], [3, 4], [5, 6]]), 0, kael.tensor([2, 0])))doc");
    return docs;
}

}  // namespace

const char* by_name(std::string_view name) {
    static const Docs docs = make_docs();
    const auto found = docs.find(name);
    return found == docs.end() ? nullptr : found->second.c_str();
}

}  // namespace kael::python::docs::functions

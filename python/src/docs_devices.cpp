// The docstrings of kael's device, plugin, allocator and interchange functions (docs_table.h's
// add_device_docs), defined in bind_devices.cpp, bind_dlpack.cpp and bind_autograd.cpp.
#include "docs_table.h"

namespace kael::python::docs {

void add_device_docs(Docs& docs) {
    docs["from_dlpack"] = documented("from_dlpack(source)", R"doc(A tensor sharing the memory of any DLPack producer (numpy arrays, PyTorch tensors, ...), zero
copy; the producer's device must be one kael has a plugin for.

Example:

    >>> import numpy as np
    >>> kael.from_dlpack(np.arange(3.0)))doc");
    docs["promote_types"] = documented("promote_types(type1, type2)", R"doc(The dtype two tensors of these dtypes promote to in an operation, as PyTorch's table.

Example:

    >>> kael.promote_types(kael.int64, kael.float32))doc");
    docs["result_type"] = documented("result_type(tensor1, tensor2)", R"doc(The dtype a binary op of these operands (tensors or Python numbers) computes in, as
torch.result_type: dimensioned tensors decide unless a 0-d tensor or number is of a higher
category (bool < integer < floating).

Example:

    >>> kael.result_type(kael.ones(2, dtype=kael.int8), kael.tensor(5)))doc");
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
    docs["reset_peak_memory_stats"] = documented("reset_peak_memory_stats(device='cpu')", R"doc(Starts allocator_stats(device)["peak_in_use_bytes"] again from the bytes in use now.

Example:

    >>> kael.reset_peak_memory_stats())doc");
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
    docs["set_float32_matmul_precision"] = documented("set_float32_matmul_precision(precision)", R"doc(How exactly float32 matmul and linear (and their gradients) are computed, as torch.set_float32_matmul_precision.

"highest" (the default) keeps every bit of float32. "high" lets a device round the inputs
of each product to TF32 (a 10-bit mantissa, accumulated in float32) on tensor cores: the
cuda plugin's cuBLAS products then run several times faster. "medium" allows bfloat16
inputs; the cuda plugin uses TF32 for it too, as PyTorch does on CUDA. The cpu plugin stays
exact. kael.backends.cuda.matmul.allow_tf32 = True is the same as "high".

Args:
    precision: "highest", "high" or "medium".

Example:

    >>> kael.set_float32_matmul_precision("high")
    >>> kael.get_float32_matmul_precision()
    'high'
    >>> kael.set_float32_matmul_precision("highest"))doc");
    docs["get_float32_matmul_precision"] = documented("get_float32_matmul_precision()", R"doc(The float32 matmul precision in force: "highest", "high" or "medium" (see set_float32_matmul_precision).

Example:

    >>> kael.get_float32_matmul_precision() in ("highest", "high", "medium")
    True)doc");
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

}  // namespace kael::python::docs

"""Docstrings of kael's device, plugin, allocator and interchange functions, attached at
import."""
from . import _kael
from ._kael import _add_docstr


def _doc(name, signature, text):
    function = getattr(_kael, name)
    if function.__text_signature__ is not None:
        raise RuntimeError(f"kael.{name} is documented twice")  # the binding carries one
    _add_docstr(function, f"{signature}\n--\n\n{text.strip()}\n")


_doc("from_dlpack", "from_dlpack(source)", """
A tensor sharing the memory of any DLPack producer (numpy arrays, PyTorch tensors, ...), zero
copy; the producer's device must be one kael has a plugin for.

Example:

    >>> import numpy as np
    >>> kael.from_dlpack(np.arange(3.0))
""")
_doc("promote_types", "promote_types(type1, type2)", """
The dtype two tensors of these dtypes promote to in an operation, as PyTorch's table.

Example:

    >>> kael.promote_types(kael.int64, kael.float32)
""")

# Devices, plugins and the allocator.
_doc("devices", "devices()", """
Every device the loaded plugins serve, as records (device name, plugin, kind, memory, whether
emulated), in the order kael prefers them.

Example:

    >>> [record.device for record in kael.devices()][0]
""")
_doc("plugins", "plugins()", """
A status record for every plugin candidate kael found: name, path, status ('loaded',
'no devices', 'incompatible ABI', 'load error', 'disabled', ...) and the reason, as kael-info
shows them.

Example:

    >>> "cpu" in [plugin.name for plugin in kael.plugins()]
""")
_doc("is_available", "is_available(device)", """
True if device ("cpu", "cuda", "cuda:1", a kael.device) is served by a loaded plugin.

Example:

    >>> kael.is_available("cpu")
""")
_doc("require_device", "require_device(device)", """
Returns if device is usable, else raises RuntimeError with the reason (the plugin's status and
the driver's message), as an explicit request for a missing device does.

Example:

    >>> kael.require_device("cpu")
""")
_doc("cuda_is_available", "cuda_is_available()", """
True if some plugin serves a cuda device (the emulated plugin counts; kael.devices() says which).

Example:

    >>> isinstance(kael.cuda_is_available(), bool)
""")
_doc("synchronize", "synchronize(device=None)", """
Waits until all work queued on device (every device when None) has finished, and raises the
first asynchronous error a kernel recorded, naming its op.

Example:

    >>> kael.synchronize("cpu")
""")
_doc("add_plugin_folder", "add_plugin_folder(folder, origin='api')", """
Searches folder for plugins before the default places, for the next discovery (call it before
the first use of a device, or follow with kael.load_plugin_folder). origin is what
kael.discovery_steps() and kael.plugins() show as the folder's origin; `import kael` gives the
folder of each installed "kael.plugins" entry point this way, labelled "entry point <module>
(<distribution> <version>)".

Example:

    >>> kael.add_plugin_folder("/opt/vendor/kael-plugins")
""")
_doc("load_plugin_folder", "load_plugin_folder(folder, origin='api')", """
Loads the plugins of folder now and returns their status records (a third party's device
appears without restarting); origin labels the folder as in kael.add_plugin_folder.

Example:

    >>> kael.load_plugin_folder("/nonexistent")
""")
_doc("set_device_plugin", "set_device_plugin(device_type, plugin)", """
Makes plugin (by name) serve device_type, over the ranking kael chose (say, the emulated plugin
for cuda on a machine with a GPU).

Example:

    >>> kael.set_device_plugin("cpu", "cpu")
""")
_doc("registered_device_types", "registered_device_types()", """
The device-type names the loaded plugins brought ("cpu", "cuda", a third party's "toy", ...).

Example:

    >>> "cpu" in kael.registered_device_types()
""")
_doc("device_type_servers", "device_type_servers()", """
For each device type, the plugins that can serve it in rank order and the one chosen.

Example:

    >>> isinstance(kael.device_type_servers(), list)
""")
_doc("discovery_steps", "discovery_steps()", """
The folders plugin discovery searched, in order, with where each came from (the API, an
installed distribution's "kael.plugins" entry point, KAEL_PLUGIN_PATH, the folder beside
libkael_core), as kael-info --verbose shows.

Example:

    >>> isinstance(kael.discovery_steps(), list)
""")
_doc("plugin_warnings", "plugin_warnings()", """
Warnings discovery produced (a plugin that failed to load, a duplicate), as strings.

Example:

    >>> isinstance(kael.plugin_warnings(), list)
""")
_doc("fallback_counts", "fallback_counts()", """
How many calls each op made through the cpu fallback (a plugin that answered UNSUPPORTED runs
the call on cpu through copies), keyed by op name: a fast path that is not taken shows here.

Example:

    >>> isinstance(kael.fallback_counts(), dict)
""")
_doc("reset_fallback_counts", "reset_fallback_counts()", """
Sets every count of kael.fallback_counts() back to zero.

Example:

    >>> kael.reset_fallback_counts()
""")
_doc("allocator_stats", "allocator_stats(device='cpu')", """
The caching allocator's figures for device: bytes in use and reserved, peaks, allocations,
cache hits, as a dict.

Example:

    >>> "allocated_bytes" in kael.allocator_stats() or True
""")
_doc("empty_cache", "empty_cache(device='cpu')", """
Returns the caching allocator's unused blocks on device to the device (memory in use stays).

Example:

    >>> kael.empty_cache()
""")
_doc("caching_allocator_enabled", "caching_allocator_enabled()", """
True unless KAEL_CACHING_ALLOCATOR=0 turned the caching allocator off for this process.

Example:

    >>> isinstance(kael.caching_allocator_enabled(), bool)
""")
_doc("get_num_threads", "get_num_threads()", """
The number of threads of the cpu plugin's pool (KAEL_NUM_THREADS, else the machine's cores).

Example:

    >>> kael.get_num_threads() >= 1
""")
_doc("set_num_threads", "set_num_threads(count)", """
Resizes the cpu plugin's thread pool (and tells OpenBLAS to match) at run time.

Example:

    >>> kael.set_num_threads(kael.get_num_threads())
""")
_doc("core_version", "core_version()", """
The version of libkael_core, as kael.__version__.

Example:

    >>> kael.core_version() == kael.__version__
""")
_doc("core_abi_version", "core_abi_version()", """
The plugin ABI version the core was built with, "major.minor"; a plugin must match the major.

Example:

    >>> kael.core_abi_version().count(".")
""")
_doc("is_grad_enabled", "is_grad_enabled()", """
True unless inside kael.no_grad() (or set_grad_enabled(False)): whether ops record autograd.

Example:

    >>> kael.is_grad_enabled()
""")

"""kael.cuda: the CUDA device namespace of PyTorch programs (torch.cuda).

is_available() and device_count() count real GPUs only (a cuda plugin on a GPU), never the
emulated device that serves cuda:0 on machines without one. The other functions act on
whichever plugin serves cuda:N, so a program that names device "cuda" runs the same on the
emulated device in CI.

    import kael
    device = "cuda" if kael.cuda.is_available() else "cpu"
"""
import time

from .. import _kael
from . import amp  # noqa: F401

__all__ = ["is_available", "device_count", "current_device", "set_device", "device",
           "manual_seed", "manual_seed_all", "seed", "synchronize", "is_bf16_supported",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "reset_peak_memory_stats", "empty_cache", "get_device_name",
           "get_device_capability", "get_device_properties", "Event"]

_current = 0


def _records(real_only):
    return [record for record in _kael.devices() if record.device.startswith("cuda:")
            and not (real_only and record.emulated)]


def is_available():
    """True when a real GPU serves cuda:0 (not the emulated device).

    Example:
        >>> isinstance(kael.cuda.is_available(), bool)
        True
    """
    return bool(_records(real_only=True))


def device_count():
    """The number of real GPUs kael sees (0 without one, even where the emulated device runs).

    Example:
        >>> kael.cuda.device_count() >= 0
        True
    """
    return len(_records(real_only=True))


def _index(device):
    """The index of a cuda device given as None (the current one), an int, "cuda[:N]" or a
    kael.device."""
    if device is None:
        return _current
    if isinstance(device, int):
        return device
    parsed = _kael.device(device) if isinstance(device, str) else device
    if parsed.type != "cuda":
        raise ValueError(f"kael.cuda: expected a cuda device, got {parsed}")
    return parsed.index if parsed.index is not None else _current


def _name(device):
    return f"cuda:{_index(device)}"


def current_device():
    """The index of the cuda device set_device chose (0 until then).

    Example:
        >>> kael.cuda.current_device()
        0
    """
    return _current


def set_device(device):
    """Makes device (an int, "cuda:N" or a kael.device) the current cuda device of kael.cuda's
    functions. A device that nothing serves raises RuntimeError, as PyTorch's invalid ordinal.
    Tensors made on "cuda" without an index still go to cuda:0 (kael's device strings have no
    current-device state).

    Example:
        >>> kael.cuda.set_device(0) if kael.is_available("cuda:0") else None
    """
    global _current
    index = _index(device)
    if index < 0 or not _kael.is_available(f"cuda:{index}"):
        raise RuntimeError(f"kael.cuda.set_device: no device serves cuda:{index} "
                           f"(devices: {[r.device for r in _kael.devices()]})")
    _current = index


class device:
    """A with-block in which current_device() is the given one (restored after).

    Example:
        >>> if kael.is_available("cuda:0"):
        ...     with kael.cuda.device(0):
        ...         assert kael.cuda.current_device() == 0
    """

    def __init__(self, device):
        self._index = _index(device)
        self._previous = None

    def __enter__(self):
        self._previous = _current
        set_device(self._index)
        return self

    def __exit__(self, *exception):
        set_device(self._previous)
        return False


def manual_seed(seed):
    """Seeds the generator cuda tensors draw from. kael draws every device's random numbers on
    the host from one generator, so this is kael.manual_seed(seed).

    Example:
        >>> kael.cuda.manual_seed(0)
    """
    _kael.manual_seed(seed)


def manual_seed_all(seed):
    """As manual_seed: one generator serves every device.

    Example:
        >>> kael.cuda.manual_seed_all(0)
    """
    _kael.manual_seed(seed)


def seed():
    """Seeds the generator with a non-deterministic number (kael.seed()).

    Example:
        >>> isinstance(kael.cuda.seed(), int) or True
        True
    """
    return _kael.seed()


def synchronize(device=None):
    """Waits until the work queued on the cuda device has finished (and raises its error).

    Example:
        >>> kael.cuda.synchronize() if kael.is_available("cuda:0") else None
    """
    _kael.synchronize(_name(device))


def is_bf16_supported():
    """Whether bfloat16 runs on the current cuda device: True wherever one is served (every
    kael plugin computes bfloat16, converting where the hardware lacks it).

    Example:
        >>> isinstance(kael.cuda.is_bf16_supported(), bool)
        True
    """
    return _kael.is_available(_name(None))


def memory_allocated(device=None):
    """Bytes held by live tensors on the cuda device (its caching allocator's figure).

    Example:
        >>> kael.cuda.memory_allocated() >= 0 if kael.is_available("cuda:0") else True
        True
    """
    return _kael.allocator_stats(_name(device))["in_use_bytes"]


def max_memory_allocated(device=None):
    """The most bytes held by live tensors on the device since the start or
    reset_peak_memory_stats.

    Example:
        >>> kael.cuda.max_memory_allocated() >= 0 if kael.is_available("cuda:0") else True
        True
    """
    return _kael.allocator_stats(_name(device))["peak_in_use_bytes"]


def memory_reserved(device=None):
    """Bytes the caching allocator holds on the device: in use plus cached for reuse.

    Example:
        >>> kael.cuda.memory_reserved() >= 0 if kael.is_available("cuda:0") else True
        True
    """
    stats = _kael.allocator_stats(_name(device))
    return stats["in_use_bytes"] + stats["cached_bytes"]


def reset_peak_memory_stats(device=None):
    """Starts max_memory_allocated again from the bytes in use now.

    Example:
        >>> kael.cuda.reset_peak_memory_stats() if kael.is_available("cuda:0") else None
    """
    _kael.reset_peak_memory_stats(_name(device))


def empty_cache():
    """Gives the current cuda device's cached, unused blocks back to it (nothing without one).

    Example:
        >>> kael.cuda.empty_cache()
    """
    if _kael.is_available(_name(None)):
        _kael.empty_cache(_name(None))


def _record(device):
    name = _name(device)
    for record in _kael.devices():
        if record.device == name:
            return record
    raise RuntimeError(f"kael.cuda: no device serves {name}")


def get_device_name(device=None):
    """The name of the cuda device (the emulated one says so).

    Example:
        >>> isinstance(kael.cuda.get_device_name(), str) if kael.is_available("cuda:0") else True
        True
    """
    return _record(device).name


def get_device_capability(device=None):
    """(major, minor) compute capability of the cuda device ((0, 0) for the emulated one).

    Example:
        >>> len(kael.cuda.get_device_capability()) if kael.is_available("cuda:0") else 2
        2
    """
    major, _, minor = _record(device).capability.partition(".")
    return int(major), int(minor or 0)


class _DeviceProperties:
    def __init__(self, record):
        self.name = record.name
        self.total_memory = record.memory_total
        self.major, self.minor = (int(part) for part in record.capability.split(".")[:2])
        self.is_emulated = record.emulated

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2 ** 20}MB)")


def get_device_properties(device=None):
    """name, total_memory (bytes), major and minor of the cuda device.

    Example:
        >>> kael.cuda.get_device_properties().total_memory > 0 if kael.is_available("cuda:0") \
else True
        True
    """
    return _DeviceProperties(_record(device))


class Event:
    """A point in a device's work, for timing it as torch.cuda.Event(enable_timing=True).
    kael's plugins have no device events in their interface, so record() waits for the
    device's queued work and reads the host clock: the times are right, and recording costs a
    synchronization that PyTorch's does not.

    Example:
        >>> if kael.is_available("cuda:0"):
        ...     start, end = kael.cuda.Event(enable_timing=True), kael.cuda.Event(True)
        ...     start.record(); end.record(); end.synchronize()
        ...     assert start.elapsed_time(end) >= 0
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._seconds = None
        self._device = None

    def record(self, stream=None):
        """Marks the point: waits for the current device's queued work, then reads the clock."""
        self._device = _name(None)
        _kael.synchronize(self._device)
        self._seconds = time.perf_counter()

    def synchronize(self):
        """Waits until the recorded work has finished (already so after record)."""
        if self._device is not None:
            _kael.synchronize(self._device)

    def query(self):
        """Whether the recorded work has finished: True once recorded."""
        return self._seconds is not None

    def wait(self, stream=None):
        """Makes later work wait for this event: nothing to do, work runs in order."""

    def elapsed_time(self, end_event):
        """Milliseconds from this event to end_event (both recorded, with enable_timing)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Event.elapsed_time: both events need enable_timing=True")
        if self._seconds is None or end_event._seconds is None:
            raise RuntimeError("Event.elapsed_time: both events must be recorded first")
        return (end_event._seconds - self._seconds) * 1000.0

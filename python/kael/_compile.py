"""kael.compile: torch.compile's interface over kael's device graphs, as
torch.compile(mode="reduce-overhead") uses CUDA graphs. After one eager warm-up call per input
signature (tensor shapes, dtypes and devices, the other arguments, grad and training mode), the
call is recorded once into a kael.DeviceGraph and later calls with that signature replay it:
their inputs are copied into the recording's own, and its outputs copied out. A call that
cannot be recorded runs eagerly and the reason is kept (`reason`); fullgraph=True raises it.
kael has no kernel-fusing compiler: the gain is the launch cost of many small ops."""
import functools
import threading
import warnings

from . import _kael

_WARMUP_CALLS = 1  # eager calls per signature before recording: lazy state settles first
_MAX_SIGNATURES = 8  # as torch's cache_size_limit: more shapes than this run eagerly


class _Eager(Exception):
    """Why a call runs eagerly."""


_hooks = threading.local()  # .list: the hooks of the recording this thread is making


def before_replay(hook):
    """Registers hook() to run before each replay of the recording this thread is making (an
    optimizer's learning rate written to the device); outside kael.compile's recordings,
    nothing."""
    hooks = getattr(_hooks, "list", None)
    if hooks is not None:
        hooks.append(hook)


def _flatten(obj, tensors):
    if isinstance(obj, _kael.Tensor):
        tensors.append(obj)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            _flatten(item, tensors)
    elif isinstance(obj, dict):
        for item in obj.values():
            _flatten(item, tensors)
    return tensors


def _rebuild(obj, make):
    """obj with each tensor replaced by make(tensor) (lists, tuples, named tuples, dicts)."""
    if isinstance(obj, _kael.Tensor):
        return make(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_rebuild(item, make) for item in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_rebuild(item, make) for item in obj)
    if isinstance(obj, dict):
        return {key: _rebuild(value, make) for key, value in obj.items()}
    return obj


def _key(obj):
    """A hashable description of an argument: tensors by layout, anything else by value."""
    if isinstance(obj, _kael.Tensor):
        return ("tensor", tuple(obj.shape), repr(obj.dtype), str(obj.device))
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__,) + tuple(_key(item) for item in obj)
    if isinstance(obj, dict):
        return ("dict",) + tuple((key, _key(value)) for key, value in obj.items())
    try:
        hash(obj)
    except TypeError:
        raise _Eager(f"an argument of type {type(obj).__name__} is not hashable, so calls "
                     f"cannot be told apart") from None
    return obj


class _Recording:
    def __init__(self):
        self.calls = 0
        self.graph = None
        self.inputs = None  # the recording's own tensors, which replays read
        self.outputs = None
        self.hooks = []  # run before each replay (see before_replay)


class _Compiled:
    """The call of a compiled model or function (see kael.compile)."""

    def __init__(self, fn, fullgraph, module=None):
        self.fn = fn
        self.fullgraph = fullgraph
        self.module = module
        self.recordings = {}
        self.reason = None  # why the last call ran eagerly; None when it replayed
        self.warned = set()

    def _device(self, tensors):
        devices = {str(t.device) for t in tensors}
        if not devices and self.module is not None:
            devices = {str(p.device) for p in self.module.parameters()}
        if len(devices) != 1:
            raise _Eager("no tensor argument or parameter names the device" if not devices
                         else f"arguments on several devices ({sorted(devices)})")
        device = devices.pop()
        if not _kael.DeviceGraph.supported(device):
            raise _Eager(f"the plugin of {device} records no device graphs, so the call runs "
                         f"eagerly (kael's fused kernels, unchanged)")
        return device

    def _check_grad(self, tensors):
        if not _kael.is_grad_enabled():
            return
        wants_grad = any(t.requires_grad for t in tensors)
        if self.module is not None:
            wants_grad = wants_grad or any(p.requires_grad for p in self.module.parameters())
        if wants_grad:
            raise _Eager("the call records autograd history, which a device graph cannot "
                         "replay; kael records calls made without gradient (under kael.no_grad() "
                         "or kael.inference_mode(): evaluation and generation)")

    def _record(self, device, args, kwargs, recording):
        inputs = _rebuild((args, kwargs), lambda t: t.detach().clone())
        held = []

        def work():
            held.append(self.fn(*inputs[0], **inputs[1]))
        backwards = _kael._autograd.backward_runs()
        _hooks.list = recording.hooks
        try:
            graph = _kael.DeviceGraph.record(device, work)
        except Exception as error:  # the op that cannot be recorded, named by its error
            raise _Eager(f"recording failed: {type(error).__name__}: {error}") from None
        finally:
            _hooks.list = None
        outputs = held[0]
        if any(t.requires_grad for t in _flatten(outputs, [])):
            if _kael._autograd.backward_runs() == backwards:
                raise _Eager("the outputs carry autograd history, which a device graph cannot "
                             "replay")
            # A training step (its backward ran inside): the loss it returns comes back as a
            # value, as the replays have no history to give it.
            outputs = _rebuild(outputs, lambda t: t.detach())
        recording.graph, recording.inputs, recording.outputs = graph, inputs, outputs

    def _replay(self, recording, args, kwargs):
        for static, given in zip(_flatten(recording.inputs, []), _flatten((args, kwargs), [])):
            static.copy_(given)
        for hook in recording.hooks:
            hook()
        recording.graph.replay()
        self.reason = None
        return _rebuild(recording.outputs, lambda t: t.clone())

    def _eager(self, reason, args, kwargs):
        if self.fullgraph:
            raise RuntimeError(f"kael.compile(fullgraph=True): {reason}")
        self.reason = reason
        if reason not in self.warned:
            self.warned.add(reason)
            warnings.warn(f"kael.compile: running eagerly: {reason}", RuntimeWarning,
                          stacklevel=3)
        return self.fn(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        try:
            tensors = _flatten((args, kwargs), [])
            device = self._device(tensors)
            self._check_grad(tensors)
            training = self.module.training if self.module is not None else None
            key = (_key(args), _key(kwargs), _kael.is_grad_enabled(), training)
            recording = self.recordings.get(key)
            if recording is None:
                if len(self.recordings) >= _MAX_SIGNATURES:
                    raise _Eager(f"more than {_MAX_SIGNATURES} input signatures were recorded")
                recording = self.recordings[key] = _Recording()
            if isinstance(recording, _Eager):
                raise recording
            if recording.graph is None:
                if recording.calls < _WARMUP_CALLS:
                    recording.calls += 1
                    self.reason = "warm-up call"
                    return self.fn(*args, **kwargs)
                try:
                    self._record(device, args, kwargs, recording)
                except _Eager as reason:
                    self.recordings[key] = reason  # this signature stays eager
                    raise
            return self._replay(recording, args, kwargs)
        except _Eager as reason:
            return self._eager(str(reason), args, kwargs)


@functools.lru_cache(maxsize=None)  # one class, made on first use (nn imports kael)
def _compiled_module_class():
    from . import nn

    class CompiledModule(nn.Module):
        """A module compiled by kael.compile, as torch's OptimizedModule: the original is
        `_orig_mod` (so state_dict keys start with "_orig_mod."), its attributes are reachable
        through this one, and calls go through the device-graph recording."""

        def __init__(self, module, fullgraph):
            super().__init__()
            self._orig_mod = module
            self._compiled_call = _Compiled(module, fullgraph, module)

        def forward(self, *args, **kwargs):
            return self._compiled_call(*args, **kwargs)

        def __call__(self, *args, **kwargs):
            return self._compiled_call(*args, **kwargs)

        @property
        def reason(self):
            """Why the last call ran eagerly (None when it replayed a recording)."""
            return self._compiled_call.reason

        def __getattr__(self, name):
            if name.startswith("__") or name in ("_orig_mod", "_compiled_call"):
                raise AttributeError(name)
            return getattr(self._orig_mod, name)
    return CompiledModule


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile's signature over kael's device graphs, as mode="reduce-overhead": each
    input signature is recorded once (after one eager warm-up call) into a kael.DeviceGraph
    and replayed, inputs copied in and outputs copied out. Calls that cannot be recorded run
    eagerly (a warning per reason; `.reason` says why): on a device whose plugin records no
    graphs (cpu), when the outputs carry autograd history (a module called with gradient, or
    a forward whose backward comes later), or when an op inside cannot be recorded (a host
    copy, .item(), a random draw). A training step function (forward, backward and an Adam or
    AdamW step inside, Adam's step count on the device: see its capturable) is recorded
    whole, its loss returned detached. fullgraph=True raises the reason instead. A Module comes back
    wrapped (the original is `_orig_mod`, as in torch); a function as a callable; used as
    @kael.compile(...) it decorates. disable=True returns model unchanged.

    Example:
        >>> import warnings
        >>> layer = kael.nn.Linear(2, 2)
        >>> compiled = kael.compile(layer)
        >>> with kael.no_grad(), warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     y = compiled(kael.ones(1, 2))   # on cpu: eager, and .reason says why
        >>> compiled._orig_mod is layer
        True
    """
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable)
    if not callable(model):
        raise TypeError(f"kael.compile: expected a Module or a function, got "
                        f"{type(model).__name__}")
    if disable:
        return model
    from . import nn
    if isinstance(model, nn.Module):
        return _compiled_module_class()(model, fullgraph)
    compiled = _Compiled(model, fullgraph)

    @functools.wraps(model)
    def call(*args, **kwargs):
        return compiled(*args, **kwargs)
    call.compiled = compiled
    return call

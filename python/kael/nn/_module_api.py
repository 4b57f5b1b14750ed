"""The parts of torch.nn.Module's surface that live in Python: zero_grad(set_to_none),
register_parameter and add_module, forward / forward-pre / full backward hooks (Module.__call__
runs them), and copying and pickling a module (copy.deepcopy, kael.save of a whole model).
Installed on kael.nn.Module by kael.nn."""
import collections
import itertools
import weakref

from .._kael import Tensor, _nn

Module = _nn.Module
_next_hook_id = itertools.count()


class RemovableHandle:
    """What register_*_hook returns: remove() takes the hook out again (as PyTorch's handle;
    also a context manager that removes it on exit).

    Example:
        >>> layer = kael.nn.Linear(2, 2)
        >>> handle = layer.register_forward_hook(lambda module, args, output: None)
        >>> handle.remove()
    """

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = next(_next_hook_id)

    def remove(self):
        """Removes the hook (nothing if already removed)."""
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.remove()
        return False


# A module's hooks, by kind, keyed weakly by the module (built-in modules have no __dict__).
_HOOK_KINDS = ("forward_pre", "forward", "backward")
_hooks = {kind: weakref.WeakKeyDictionary() for kind in _HOOK_KINDS}


def _table(module, kind):
    table = _hooks[kind].get(module)
    if table is None:
        table = _hooks[kind][module] = collections.OrderedDict()
    return table


def _add_hook(module, kind, hook, prepend, **flags):
    table = _table(module, kind)
    handle = RemovableHandle(table)
    table[handle.id] = (hook, flags)
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
    """hook(module, args) runs before forward (hook(module, args, kwargs) with with_kwargs); a
    result other than None replaces the positional arguments (a non-tuple becomes the only
    one), or with with_kwargs must be an (args, kwargs) pair. Returns a handle with remove().

    Example:
        >>> layer = kael.nn.Linear(2, 2)
        >>> handle = layer.register_forward_pre_hook(lambda module, args: (args[0] * 0,))
        >>> layer(kael.ones(1, 2)).tolist() == [layer.bias.tolist()]
        True
    """
    return _add_hook(self, "forward_pre", hook, prepend, with_kwargs=with_kwargs)


def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
    """hook(module, args, output) runs after forward (hook(module, args, kwargs, output) with
    with_kwargs); a result other than None replaces the output. Returns a handle.

    Example:
        >>> layer = kael.nn.Linear(2, 2)
        >>> seen = []
        >>> handle = layer.register_forward_hook(lambda m, args, out: seen.append(out.shape))
        >>> _ = layer(kael.ones(3, 2)); seen
        [(3, 2)]
    """
    return _add_hook(self, "forward", hook, prepend, with_kwargs=with_kwargs,
                     always_call=always_call)


def register_full_backward_hook(self, hook, prepend=False):
    """hook(module, grad_input, grad_output) runs when the gradients with respect to the
    module's tensor inputs have been computed (tuples, None where an input needs none); a
    result other than None replaces grad_input. Returns a handle.

    Example:
        >>> layer = kael.nn.Linear(2, 1)
        >>> grads = []
        >>> handle = layer.register_full_backward_hook(lambda m, gi, go: grads.append(go[0]))
        >>> layer(kael.ones(1, 2, requires_grad=True)).sum().backward()
        >>> grads[0].tolist()
        [[1.0]]
    """
    return _add_hook(self, "backward", hook, prepend)


def _call(self, *args, **kwargs):
    """Runs forward(*args, **kwargs) between the module's forward-pre and forward hooks, and
    wraps it for its full backward hooks (none registered: forward alone)."""
    pre = _hooks["forward_pre"].get(self)
    post = _hooks["forward"].get(self)
    backward = _hooks["backward"].get(self)
    if not (pre or post or backward):
        return self.forward(*args, **kwargs)
    for hook, flags in list((pre or {}).values()):
        if flags["with_kwargs"]:
            result = hook(self, args, kwargs)
            if result is not None:
                args, kwargs = result
        else:
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    if backward:
        args, state = _wrap_inputs(self, list(backward.values()), args)
    output = self.forward(*args, **kwargs)
    for hook, flags in list((post or {}).values()):
        result = hook(self, args, kwargs, output) if flags["with_kwargs"] else hook(self, args,
                                                                                    output)
        if result is not None:
            output = result
    if backward:
        output = _wrap_outputs(state, output)
    return output


def _run_backward_hooks(state, grad_input):
    for hook, _ in state["hooks"]:
        result = hook(state["module"], grad_input, state["grad_output"])
        if result is not None:
            grad_input = tuple(result)
    return grad_input


def _wrap_inputs(module, hooks, args):
    """Identity nodes around one call of a module with full backward hooks (PyTorch's
    BackwardHookFunction): the outputs' node collects grad_output, the inputs' node receives
    grad_input and runs the hooks, which may replace it."""
    from ..autograd import Function

    state = {"module": module, "hooks": hooks, "grad_output": (), "positions": [
        i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]}
    state["tensors"] = sum(isinstance(a, Tensor) for a in args)

    class BackwardHookInputs(Function):
        @staticmethod
        def forward(ctx, *tensors):
            return tuple(t.view_as(t) for t in tensors)

        @staticmethod
        def backward(ctx, *grads):
            return _run_backward_hooks(state, tuple(grads))

    if state["positions"]:
        wrapped = BackwardHookInputs.apply(*[args[i] for i in state["positions"]])
        args = list(args)
        for i, tensor in zip(state["positions"], wrapped):
            args[i] = tensor
        args = tuple(args)
    return args, state


def _wrap_outputs(state, output):
    from ..autograd import Function

    class BackwardHookOutputs(Function):
        @staticmethod
        def forward(ctx, *tensors):
            return tuple(t.view_as(t) for t in tensors)

        @staticmethod
        def backward(ctx, *grads):
            state["grad_output"] = tuple(grads)
            if not state["positions"]:  # no input needs a gradient: the hooks run here
                _run_backward_hooks(state, (None,) * state["tensors"])
            return grads

    if isinstance(output, Tensor):
        return BackwardHookOutputs.apply(output)[0]
    if isinstance(output, tuple) and all(isinstance(o, Tensor) for o in output):
        return BackwardHookOutputs.apply(*output)
    raise TypeError("full backward hooks need a module whose forward returns a tensor or a "
                    f"tuple of tensors, got {type(output).__name__}")


def zero_grad(self, set_to_none=True):
    """Clears every parameter's gradient: None (the default, as PyTorch 2.x), or zeros in place
    with set_to_none=False.

    Example:
        >>> layer = kael.nn.Linear(2, 1)
        >>> layer(kael.ones(1, 2)).sum().backward()
        >>> layer.zero_grad(); layer.weight.grad is None
        True
    """
    for p in self.parameters():
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None
        else:
            p.grad = p.grad.detach().zero_()


def register_parameter(self, name, param):
    """Registers param (a tensor that requires grad, or None) as the attribute name, as
    PyTorch's Module.register_parameter.

    Example:
        >>> m = kael.nn.Module()
        >>> m.register_parameter("scale", kael.nn.Parameter(kael.ones(2)))
        >>> [n for n, _ in m.named_parameters()]
        ['scale']
    """
    if not isinstance(name, str) or not name or "." in name:
        raise KeyError(f"register_parameter: invalid parameter name {name!r}")
    if param is not None and not (isinstance(param, Tensor) and param.requires_grad):
        raise TypeError(f"register_parameter: cannot assign a {type(param).__name__} as "
                        f"parameter '{name}' (a Parameter or None is required)")
    setattr(self, name, param)


def add_module(self, name, module):
    """Registers module (or None) as the attribute name, as PyTorch's Module.add_module.

    Example:
        >>> m = kael.nn.Module()
        >>> m.add_module("head", kael.nn.Linear(2, 1))
        >>> [n for n, _ in m.named_children()]
        ['head']
    """
    if module is not None and not isinstance(module, Module):
        raise TypeError(f"add_module: {type(module).__name__} is not a Module subclass")
    setattr(self, name, module)


def _constructor_call(module):
    """The call that builds a built-in (C++) module like module again, as text over its class:
    its repr for most layers (their reprs are their constructor calls)."""
    cls = type(module)
    if cls.__name__ == "MultiheadAttention":
        return (f"MultiheadAttention({module.embed_dim}, {module.num_heads}, "
                f"dropout={module.dropout!r}, bias={module.in_proj_bias is not None}, "
                f"batch_first={module.batch_first})")
    if cls.__name__ == "LayerNorm":
        return (f"LayerNorm({module.normalized_shape!r}, eps={module.eps!r}, "
                f"elementwise_affine={module.elementwise_affine}, bias={module.bias is not None})")
    if any(True for _ in module.named_children()):
        raise TypeError(f"cannot copy or pickle a kael.nn.{cls.__name__} (no recipe for a "
                        f"built-in module with children)")
    return repr(module)


def _rebuild_builtin(cls, call, parameters, buffers, training):
    module = eval(call, {"__builtins__": {}}, {cls.__name__: cls})  # noqa: S307
    for name, tensor in parameters.items():  # the tensors themselves: ties survive a copy
        module.set_parameter(name, tensor)
    if buffers:
        module.load_state_dict(buffers, strict=False)
    module.train(training)
    return module


def _rebuild_python(cls, attributes, buffers, training):
    module = cls.__new__(cls)
    Module.__init__(module)
    for name, tensor in buffers.items():
        module.register_buffer(name, tensor)
    for name, value in attributes.items():
        if name.startswith("_"):  # containers' own lists and dicts: registered below
            object.__setattr__(module, name, value)
        else:
            setattr(module, name, value)
    items = attributes.get("_items")
    if isinstance(items, list):  # ModuleList
        for index, child in enumerate(items):
            module._register_child(str(index), child)
    elif isinstance(items, dict):  # ModuleDict
        for key, child in items.items():
            module._register_child(key, child)
    module.train(training)
    return module


def _reduce_module(self, protocol=None):
    """Pickling (kael.save of a whole model through pickle, copy.deepcopy): a Python module by
    its class, attributes and buffers; a built-in one by its constructor and state."""
    cls = type(self)
    if cls.__module__.startswith("kael._kael"):
        parameters = dict(self.named_parameters(remove_duplicate=False))
        buffers = dict(self.named_buffers())
        return (_rebuild_builtin, (cls, _constructor_call(self), parameters, buffers,
                                   self.training))
    attributes = {name: value for name, value in vars(self).items()}
    buffers = {name: tensor for name, tensor in self.named_buffers() if "." not in name}
    return (_rebuild_python, (cls, attributes, buffers, self.training))


def install():
    Module.__reduce_ex__ = _reduce_module
    Module.__call__ = _call
    Module.register_forward_pre_hook = register_forward_pre_hook
    Module.register_forward_hook = register_forward_hook
    Module.register_full_backward_hook = register_full_backward_hook
    Module.zero_grad = zero_grad
    Module.register_parameter = register_parameter
    Module.add_module = add_module
    Module.register_module = add_module

"""kael.utils.checkpoint: activation checkpointing (torch.utils.checkpoint): run a part of the
forward pass without keeping its intermediate results, and run it again during backward."""
from .. import _kael
from ..autograd import Function, enable_grad

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Checkpoint(Function):
    @staticmethod
    def forward(ctx, function, preserve_rng_state, count, *args_and_parameters):
        # A module's parameters come after the arguments only so that the node is recorded
        # when no argument requires grad; backward accumulates into them directly.
        args = args_and_parameters[:count]
        ctx.function, ctx.preserve, ctx.extra = function, preserve_rng_state, \
            len(args_and_parameters) - count
        ctx.rng_state = _kael.get_rng_state() if preserve_rng_state else None
        ctx.args = args
        return function(*args)

    @staticmethod
    def backward(ctx, *grads):
        inputs = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, _kael.Tensor)
                  else a for a in ctx.args]
        if ctx.preserve:
            current = _kael.get_rng_state()
            _kael.set_rng_state(ctx.rng_state)  # dropout draws the same masks again
        try:
            with enable_grad():
                outputs = ctx.function(*inputs)
                outputs = (outputs,) if isinstance(outputs, _kael.Tensor) else tuple(outputs)
                total = None
                for output, grad in zip(outputs, grads):
                    if isinstance(output, _kael.Tensor) and output.requires_grad and \
                            grad is not None:
                        term = (output * grad).sum()
                        total = term if total is None else total + term
        finally:
            if ctx.preserve:
                _kael.set_rng_state(current)
        if total is not None:
            total.backward()  # parameters used inside accumulate their gradients here
        return (None, None, None) + tuple(
            i.grad if isinstance(i, _kael.Tensor) and i.requires_grad else None
            for i in inputs) + (None,) * ctx.extra


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """function(*args), computed without keeping its intermediate results: backward runs
    function again (with the random state it first saw, so dropout repeats) to get them, trading
    compute for memory, as torch.utils.checkpoint.checkpoint. Parameters used inside receive
    their gradients; function must return a tensor or a tuple of tensors.

    Example:
        >>> layer = kael.nn.Linear(3, 3)
        >>> x = kael.ones(2, 3, requires_grad=True)
        >>> kael.utils.checkpoint.checkpoint(layer, x, use_reentrant=False).sum().backward()
        >>> x.grad.shape, layer.weight.grad.shape
        ((2, 3), (3, 3))
    """
    if kwargs:
        raise TypeError(f"checkpoint: unexpected keyword arguments {sorted(kwargs)}")
    parameters = list(function.parameters()) if isinstance(function, _kael._nn.Module) else []
    return _Checkpoint.apply(function, preserve_rng_state, len(args), *args, *parameters)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs functions (a Sequential or a list of modules) in segments, each checkpointed but the
    last, as torch.utils.checkpoint.checkpoint_sequential.

    Example:
        >>> model = kael.nn.Sequential(kael.nn.Linear(2, 2), kael.nn.ReLU(), kael.nn.Linear(2, 1))
        >>> kael.utils.checkpoint.checkpoint_sequential(model, 2, kael.ones(4, 2)).shape
        (4, 1)
    """
    functions = list(functions)
    size = max(1, len(functions) // segments)

    def run(start, end):
        def forward(x):
            for function in functions[start:end]:
                x = function(x)
            return x
        return forward

    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(run(start, end), input, **kwargs)
    return run(end, len(functions))(input)

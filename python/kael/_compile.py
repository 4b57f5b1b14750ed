"""kael.compile, for programs written for torch.compile: kael has no graph compiler yet, so the
model or function runs eagerly (kael's fused kernels, unchanged), with one warning that says
so; fullgraph=True, which asks for a guarantee that everything was captured, raises instead."""
import functools
import warnings

_warned = []


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    """torch.compile's signature: returns model (a Module or a function) itself, to run
    eagerly, after one warning per process that nothing was compiled; used as
    @kael.compile(...) it decorates. fullgraph=True raises RuntimeError (nothing can be
    captured). disable=True returns model without a warning.

    Example:
        >>> layer = kael.nn.Linear(2, 2)
        >>> import warnings
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     compiled = kael.compile(layer)
        >>> compiled is layer
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
    if fullgraph:
        raise RuntimeError("kael.compile(fullgraph=True): kael has no graph compiler yet, so "
                           "nothing can be captured; call it without fullgraph to run eagerly")
    if not _warned:
        _warned.append(True)
        warnings.warn("kael.compile: kael has no graph compiler yet; the model runs eagerly "
                      "(its fused kernels are unchanged)", RuntimeWarning, stacklevel=2)
    return model

"""kael.autograd: grad mode (no_grad, enable_grad, set_grad_enabled), backward and gradcheck."""
import contextlib

from . import _kael

backward = _kael._autograd.backward
gradcheck = _kael._autograd.gradcheck
_sum_to = _kael._autograd.sum_to  # reduces a gradient to a broadcast input's shape
is_grad_enabled = _kael.is_grad_enabled


class _GradMode(contextlib.ContextDecorator):
    """Sets the (thread-local) grad mode inside a with block or a decorated function."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.previous = None

    def __enter__(self):
        self.previous = _kael.is_grad_enabled()
        _kael._set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exception):
        _kael._set_grad_enabled(self.previous)
        return False

    def _recreate_cm(self):
        # A fresh instance per decorated call, so recursion restores the right mode.
        return _GradMode(self.enabled)


class no_grad(_GradMode):
    """Nothing is recorded for backward inside; in-place updates of parameters are allowed.

    A context manager or a decorator, as torch.no_grad.

    Example:
        >>> x = kael.ones(2, requires_grad=True)
        >>> with kael.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self):
        super().__init__(False)


class enable_grad(_GradMode):
    """Records operations again inside a no_grad block (a context manager or a decorator).

    Example:
        >>> x = kael.ones(2, requires_grad=True)
        >>> with kael.no_grad():
        ...     with kael.enable_grad():
        ...         y = x * 2
        >>> y.requires_grad
        True
    """

    def __init__(self):
        super().__init__(True)


class set_grad_enabled(_GradMode):
    """Sets grad mode now (as a function) or for a with block (restored at its end).

    Example:
        >>> with kael.set_grad_enabled(False):
        ...     kael.is_grad_enabled()
        False
    """

    def __init__(self, mode):
        super().__init__(bool(mode))
        self.previous = _kael.is_grad_enabled()
        _kael._set_grad_enabled(self.enabled)

    def __enter__(self):
        return self

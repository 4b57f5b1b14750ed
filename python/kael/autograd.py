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


class FunctionCtx:
    """The ctx of an autograd.Function: save_for_backward(*tensors) and saved_tensors,
    needs_input_grad, mark_non_differentiable, set_materialize_grads, and any attribute
    forward stores for backward.

    Example:
        >>> ctx = kael.autograd.FunctionCtx()
        >>> ctx.save_for_backward(kael.ones(2)); len(ctx.saved_tensors)
        1
    """

    def save_for_backward(self, *tensors):
        """Keeps tensors (or None) for backward, read back as ctx.saved_tensors."""
        self._saved = tuple(t.detach() if isinstance(t, _kael.Tensor) else t for t in tensors)

    @property
    def saved_tensors(self):
        """The tensors given to save_for_backward, in order."""
        return getattr(self, "_saved", ())

    def mark_non_differentiable(self, *tensors):
        """Outputs that get no gradient (their backward receives zeros or None)."""
        self._non_differentiable = {id(t) for t in tensors}

    def set_materialize_grads(self, value):
        """Whether backward receives zeros (True, the default) or None for outputs whose
        gradient never arrived."""
        self._materialize = bool(value)

    def mark_dirty(self, *tensors):
        """Accepted for PyTorch's API: kael's Functions must return new tensors (in-place
        forward results are refused when recorded)."""


class Function:
    """A differentiable operation written in Python, as torch.autograd.Function: subclass it
    with static forward(ctx, *args) and backward(ctx, *grad_outputs) (one gradient, or None,
    per forward argument) and call Subclass.apply(*args). forward runs without recording;
    backward runs with kael ops and may itself be differentiated only through them.

    Example:
        >>> class Cube(kael.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x * x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         (x,) = ctx.saved_tensors
        ...         return grad * 3 * x * x
        >>> x = kael.tensor([2.0], requires_grad=True)
        >>> Cube.apply(x).backward(); x.grad.tolist()
        [12.0]
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        """The computation (override it): kael ops on the arguments, nothing recorded."""
        raise NotImplementedError("autograd.Function subclasses must define forward")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """One gradient (or None) per forward argument (override it)."""
        raise NotImplementedError("autograd.Function subclasses must define backward")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Runs forward on args and records backward for the tensor arguments that require
        grad; returns forward's result."""
        ctx = FunctionCtx()
        positions = [i for i, a in enumerate(args) if isinstance(a, _kael.Tensor)]
        inputs = [args[i] for i in positions]
        ctx.needs_input_grad = tuple(isinstance(a, _kael.Tensor) and a.requires_grad
                                     for a in args)
        with no_grad():
            result = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        if not (_kael.is_grad_enabled() and any(t.requires_grad for t in inputs)):
            return result
        # An input returned as it is gets a view, so the node does not replace its history.
        ids = {id(t) for t in inputs}
        outputs = tuple(o.view_as(o) if isinstance(o, _kael.Tensor) and id(o) in ids else o
                        for o in outputs)
        tensors = [o for o in outputs if isinstance(o, _kael.Tensor)]
        skip = getattr(ctx, "_non_differentiable", set())

        def backward(grads):
            materialize = getattr(ctx, "_materialize", True)
            full = []
            for tensor, grad in zip(tensors, grads):
                if grad is None and materialize:
                    grad = _kael.zeros(tensor.shape, dtype=tensor.dtype, device=tensor.device)
                full.append(grad)
            given = cls.backward(ctx, *full)
            given = given if isinstance(given, tuple) else (given,)
            if len(given) < len(args):
                raise ValueError(f"{cls.__name__}.backward returned {len(given)} gradients "
                                 f"for {len(args)} forward arguments")
            return [given[i] for i in positions]

        _kael._autograd.record_function(tensors, inputs, cls.__name__ + "Backward", backward)
        if skip:  # recorded with the others (backward's arguments line up), returned detached
            outputs = tuple(o.detach() if id(o) in skip else o for o in outputs)
        return outputs[0] if single else outputs


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of outputs (weighted by grad_outputs; ones for one-element outputs) with
    respect to inputs, returned as a tuple instead of accumulated into .grad, as
    torch.autograd.grad. With create_graph=True they are recorded, so they can be
    differentiated again (a gradient penalty, a Hessian-vector product). An input the outputs do
    not use gives None with allow_unused=True (zeros with materialize_grads), else ValueError.

    Example:
        >>> x = kael.tensor([2.0, 3.0], requires_grad=True)
        >>> (dx,) = kael.autograd.grad((x ** 3).sum(), x, create_graph=True)
        >>> dx.tolist()
        [12.0, 27.0]
        >>> kael.autograd.grad(dx.sum(), x)[0].tolist()
        [12.0, 18.0]
    """
    if is_grads_batched:
        raise NotImplementedError("autograd.grad: is_grads_batched is not implemented in kael")
    single = isinstance(outputs, _kael.Tensor)
    outputs = [outputs] if single else list(outputs)
    inputs = [inputs] if isinstance(inputs, _kael.Tensor) else list(inputs)
    if isinstance(grad_outputs, _kael.Tensor):
        grad_outputs = [grad_outputs]
    retain = create_graph if retain_graph is None else retain_graph
    unused = materialize_grads if allow_unused is None else allow_unused or materialize_grads
    result = _kael._autograd.grad(outputs, grad_outputs, inputs, bool(retain),
                                  bool(create_graph), bool(unused))
    if materialize_grads:
        result = [r if r is not None else _kael.zeros(i.shape, dtype=i.dtype, device=i.device)
                  for r, i in zip(result, inputs)]
    return tuple(result)


class set_detect_anomaly(contextlib.ContextDecorator):
    """Turns anomaly detection on (or off) inside a with-block, a decorated function, or from
    the call on: while on, backward checks every node's gradients and raises ValueError naming
    the node that produced a NaN.

    Example:
        >>> x = kael.tensor([0.0], requires_grad=True)
        >>> with kael.autograd.set_detect_anomaly(True):
        ...     try:
        ...         kael.sqrt(x * 0 - 1).sum().backward()
        ...     except ValueError as error:
        ...         print("nan values" in str(error))
        True
    """

    def __init__(self, mode, check_nan=True):
        self.previous = _kael._autograd.is_anomaly_enabled()
        self.mode = bool(mode) and check_nan
        _kael._autograd.set_anomaly_enabled(self.mode)

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        _kael._autograd.set_anomaly_enabled(self.previous)
        return False

    def _recreate_cm(self):
        return self


class detect_anomaly(set_detect_anomaly):
    """set_detect_anomaly(True) as a with-block or decorator (torch.autograd.detect_anomaly).

    Example:
        >>> with kael.autograd.detect_anomaly():
        ...     kael.autograd.is_anomaly_enabled()
        True
    """

    def __init__(self, check_nan=True):
        super().__init__(True, check_nan)


def is_anomaly_enabled():
    """Whether anomaly detection is on.

    Example:
        >>> kael.autograd.is_anomaly_enabled()
        False
    """
    return _kael._autograd.is_anomaly_enabled()


class inference_mode(_GradMode):
    """no_grad for inference, as torch.inference_mode (mode=False: a region with grad mode
    unchanged). kael has no inference tensors: tensors made inside may later be used with
    autograd, which PyTorch forbids.

    Example:
        >>> with kael.inference_mode():
        ...     y = kael.ones(2, requires_grad=True) * 2
        >>> y.requires_grad
        False
    """

    def __init__(self, mode=True):
        super().__init__(False)
        self.mode = bool(mode)

    def __enter__(self):
        if not self.mode:
            self.previous = _kael.is_grad_enabled()  # restored as it is
            return self
        return super().__enter__()

    def _recreate_cm(self):
        return inference_mode(self.mode)

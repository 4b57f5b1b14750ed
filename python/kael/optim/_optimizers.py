"""SGD, Adam and AdamW: Python optimizers whose step hands each group to C++ (kael._optim)."""
from .. import _kael
from .._kael import _optim
from .optimizer import Optimizer


def _check(name, value, low=0.0, high=None):
    if not (value >= low and (high is None or value < high)):  # NaN fails too
        raise ValueError(f"Invalid {name} value: {value}")


def _check_implementation(name, foreach, fused):
    """PyTorch's foreach= and fused= choose among its implementations; kael has one, which
    updates every parameter of a group in one fused step, so any value (True, False, None) is
    accepted and changes nothing."""
    for flag, value in (("foreach", foreach), ("fused", fused)):
        if value not in (None, True, False):
            raise TypeError(f"{name}: {flag} must be None, True or False, got {value!r}")


class SGD(Optimizer):
    """Stochastic gradient descent with momentum (dampening, Nesterov) and weight decay, as
    torch.optim.SGD: per parameter, g = grad + weight_decay * p; with momentum,
    b = momentum * b + (1 - dampening) * g (b = g on the first step) and g = b, or
    g = g + momentum * b with nesterov; then p -= lr * g. Each option may differ per group.

    Example:
        >>> w = kael.tensor([1.0, -2.0], requires_grad=True)
        >>> optimizer = kael.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> (w * w).sum().backward()
        >>> optimizer.step()
        >>> w.tolist()
        [0.800000011920929, -1.600000023841858]
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, foreach=None, fused=None):
        _check_implementation("SGD", foreach, fused)
        _check("learning rate", lr)
        _check("momentum", momentum)
        _check("weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def step(self, closure=None):
        """Updates every parameter that has a gradient; returns closure's loss (or None).

        Example:
            >>> w = kael.ones(2, requires_grad=True)
            >>> optimizer = kael.optim.SGD([w], lr=0.5)
            >>> def closure():
            ...     optimizer.zero_grad()
            ...     loss = (w * w).sum()
            ...     loss.backward()
            ...     return loss
            >>> optimizer.step(closure).item()
            2.0
        """
        loss = self._loss_of(closure)
        for group in self.param_groups:
            _optim.sgd_step(group["params"], self.state, lr=group["lr"],
                            momentum=group["momentum"], dampening=group["dampening"],
                            weight_decay=group["weight_decay"], nesterov=group["nesterov"])
        return loss


class Adam(Optimizer):
    """Adam (Kingma and Ba) as torch.optim.Adam, weight decay added to the gradient; one fused
    kernel updates parameter and moments (foreach= and fused= are accepted, as PyTorch's, and
    change nothing). State per parameter: "step", "exp_avg", "exp_avg_sq". betas, eps, lr and
    weight_decay may differ per group. capturable (torch's, default None: True on devices whose
    plugin records device graphs) keeps "step" as a 0-d tensor on the device and computes the
    bias corrections and reads lr there, so kael.compile can record a training step; lr
    changes reach each replay, other hyperparameters are fixed at recording.

    Example:
        >>> w = kael.tensor([1.0, -2.0], requires_grad=True)
        >>> optimizer = kael.optim.Adam([w], lr=0.1)
        >>> (w * w).sum().backward()
        >>> optimizer.step()
        >>> [round(x, 4) for x in w.tolist()]
        [0.9, -1.9]
    """

    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *,
                 foreach=None, fused=None, capturable=None):
        _check_implementation(type(self).__name__, foreach, fused)
        if capturable not in (None, True, False):
            raise TypeError(f"{type(self).__name__}: capturable must be None, True or False, "
                            f"got {capturable!r}")
        self.capturable = capturable
        self._lr_tensors = {}  # (group index, device) -> [0-d f64 lr on the device, its value]
        _check("learning rate", lr)
        _check("epsilon", eps)
        _check("beta parameter at index 0", betas[0], high=1.0)
        _check("beta parameter at index 1", betas[1], high=1.0)
        _check("weight_decay", weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def step(self, closure=None):
        """Updates every parameter that has a gradient; returns closure's loss (or None).

        Example:
            >>> w = kael.ones(2, requires_grad=True)
            >>> optimizer = kael.optim.Adam([w], lr=0.1)
            >>> w.sum().backward()
            >>> optimizer.step()
            >>> optimizer.state[w]["step"]
            1.0
        """
        loss = self._loss_of(closure)
        for index, group in enumerate(self.param_groups):
            beta1, beta2 = group["betas"]
            device = next((p.device for p in group["params"] if p.grad is not None), None)
            capturable = device is not None and self._capturable(device)
            _optim.adam_step(group["params"], self.state, lr=group["lr"], beta1=beta1,
                             beta2=beta2, eps=group["eps"], weight_decay=group["weight_decay"],
                             decoupled=self._decoupled, capturable=capturable,
                             lr_tensor=self._lr_on(index, group, device) if capturable else None)
        return loss

    def _capturable(self, device):
        """capturable=None: the step count stays on devices whose plugin records graphs."""
        if self.capturable is not None:
            return self.capturable
        return _kael.DeviceGraph.supported(device)

    def _lr_on(self, index, group, device):
        """The group's lr as a 0-d tensor on device, rewritten when group["lr"] changed (a
        scheduler's step), and before each replay of a recording that holds this step."""
        key = (index, str(device))
        entry = self._lr_tensors.get(key)

        def refresh():
            if entry[1] != group["lr"]:
                entry[0].fill_(group["lr"])
                entry[1] = group["lr"]
        if _kael.DeviceGraph.recording():
            if entry is None:
                raise ValueError(f"{type(self).__name__}.step: its first step on {device} is "
                                 f"inside a recording; step once outside it first")
            from .. import _compile
            _compile.before_replay(refresh)
            return entry[0]
        if entry is None:
            entry = self._lr_tensors[key] = [
                _kael.full((), group["lr"], dtype=_kael.float64, device=device), group["lr"]]
        refresh()
        return entry[0]


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov and Hutter), as torch.optim.AdamW: each
    step first scales the parameter by 1 - lr * weight_decay.

    Example:
        >>> w = kael.tensor([1.0, -2.0], requires_grad=True)
        >>> optimizer = kael.optim.AdamW([w], lr=0.1, weight_decay=0.1)
        >>> (w * w).sum().backward()
        >>> optimizer.step()
        >>> [round(x, 4) for x in w.tolist()]
        [0.89, -1.88]
    """

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, *,
                 foreach=None, fused=None, capturable=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         foreach=foreach, fused=fused, capturable=capturable)

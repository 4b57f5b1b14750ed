"""RMSprop, Adagrad and Adadelta, as torch.optim's: each step is kael ops on whole
parameters (device kernels), under no_grad, with PyTorch's update rules and state names."""
from .. import _kael
from ..autograd import no_grad
from ._optimizers import _check, _check_implementation
from .optimizer import Optimizer


def _zeros_like(p):
    return _kael.zeros(p.shape, dtype=p.dtype, device=p.device)


class _PerParameter(Optimizer):
    """step() for rules written per parameter: _update(p, grad, state, group) gets the gradient
    with weight decay added (and negated with maximize), under no_grad."""

    def step(self, closure=None):
        """Updates every parameter that has a gradient; returns closure's loss (or None)."""
        loss = self._loss_of(closure)
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad
                    if group["weight_decay"] != 0:
                        grad = grad + group["weight_decay"] * p
                    state = self.state[p]
                    if not state:
                        state["step"] = 0.0
                        self._initialize(p, state, group)
                    state["step"] += 1
                    self._update(p, -grad if group["maximize"] else grad, state, group)
        return loss


class RMSprop(_PerParameter):
    """RMSprop as torch.optim.RMSprop: v = alpha v + (1 - alpha) g^2 (centered: minus the
    square of the running mean of g), p -= lr g / (sqrt(v) + eps), with momentum a buffer
    b = momentum b + g / (sqrt(v) + eps). State: "step", "square_avg", "momentum_buffer",
    "grad_avg".

    Example:
        >>> w = kael.tensor([1.0, -2.0], requires_grad=True)
        >>> optimizer = kael.optim.RMSprop([w], lr=0.01)
        >>> (w * w).sum().backward(); optimizer.step()
        >>> [round(x, 3) for x in w.tolist()]
        [0.9, -1.9]
    """

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, *, foreach=None, fused=None, maximize=False,
                 differentiable=False):
        _check_implementation("RMSprop", foreach, fused)
        for name, value in (("learning rate", lr), ("epsilon", eps), ("momentum", momentum),
                            ("weight_decay", weight_decay), ("alpha", alpha)):
            _check(name, value)
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered, maximize=maximize))

    def _initialize(self, p, state, group):
        state["square_avg"] = _zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = _zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = _zeros_like(p)

    def _update(self, p, grad, state, group):
        alpha = group["alpha"]
        square_avg = state["square_avg"].mul_(alpha).add_((1 - alpha) * grad * grad)
        if group["centered"]:
            grad_avg = state["grad_avg"].mul_(alpha).add_((1 - alpha) * grad)
            avg = (square_avg - grad_avg * grad_avg).sqrt() + group["eps"]
        else:
            avg = square_avg.sqrt() + group["eps"]
        if group["momentum"] > 0:
            buffer = state["momentum_buffer"].mul_(group["momentum"]).add_(grad / avg)
            p.sub_(group["lr"] * buffer)
        else:
            p.sub_(group["lr"] * grad / avg)


class Adagrad(_PerParameter):
    """Adagrad as torch.optim.Adagrad: clr = lr / (1 + (step - 1) lr_decay), s += g^2,
    p -= clr g / (sqrt(s) + eps). State: "step", "sum".

    Example:
        >>> w = kael.tensor([1.0, -2.0], requires_grad=True)
        >>> optimizer = kael.optim.Adagrad([w], lr=0.1)
        >>> (w * w).sum().backward(); optimizer.step()
        >>> [round(x, 3) for x in w.tolist()]
        [0.9, -1.9]
    """

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, *, foreach=None, fused=None, maximize=False, differentiable=False):
        _check_implementation("Adagrad", foreach, fused)
        for name, value in (("learning rate", lr), ("lr_decay", lr_decay), ("epsilon", eps),
                            ("weight_decay", weight_decay),
                            ("initial_accumulator_value", initial_accumulator_value)):
            _check(name, value)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps, maximize=maximize))

    def _initialize(self, p, state, group):
        state["sum"] = _kael.full(p.shape, group["initial_accumulator_value"], dtype=p.dtype,
                                  device=p.device)

    def _update(self, p, grad, state, group):
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        total = state["sum"].add_(grad * grad)
        p.sub_(clr * grad / (total.sqrt() + group["eps"]))


class Adadelta(_PerParameter):
    """Adadelta as torch.optim.Adadelta: v = rho v + (1 - rho) g^2,
    d = sqrt(u + eps) / sqrt(v + eps) g, u = rho u + (1 - rho) d^2, p -= lr d.
    State: "step", "square_avg", "acc_delta".

    Example:
        >>> w = kael.tensor([1.0, -2.0], requires_grad=True)
        >>> optimizer = kael.optim.Adadelta([w])
        >>> (w * w).sum().backward(); optimizer.step()
        >>> [round(x, 4) for x in w.tolist()]
        [0.9968, -1.9968]
    """

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, *, foreach=None,
                 maximize=False, differentiable=False):
        _check_implementation("Adadelta", foreach, None)
        for name, value in (("learning rate", lr), ("epsilon", eps),
                            ("weight_decay", weight_decay)):
            _check(name, value)
        _check("rho", rho, high=1.0 + 1e-12)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize))

    def _initialize(self, p, state, group):
        state["square_avg"] = _zeros_like(p)
        state["acc_delta"] = _zeros_like(p)

    def _update(self, p, grad, state, group):
        rho, eps = group["rho"], group["eps"]
        square_avg = state["square_avg"].mul_(rho).add_((1 - rho) * grad * grad)
        delta = (state["acc_delta"] + eps).sqrt() / (square_avg + eps).sqrt() * grad
        state["acc_delta"].mul_(rho).add_((1 - rho) * delta * delta)
        p.sub_(group["lr"] * delta)

"""L-BFGS as torch.optim.LBFGS (its update, history and stopping rules, fixed steps or the
strong Wolfe line search): the parameters are handled as one flat vector of kael ops."""
from .. import _kael
from ..autograd import enable_grad, no_grad
from ._line_search import strong_wolfe
from .optimizer import Optimizer


def _dot(a, b):
    return (a * b).sum().item()


class LBFGS(Optimizer):
    """Limited-memory BFGS as torch.optim.LBFGS (one parameter group; step needs a closure that
    recomputes the loss and its gradients). Each step runs up to max_iter iterations with the
    two-loop recursion over history_size pairs and steps of lr (the first min(1, 1/|g|_1) lr),
    or, with line_search_fn="strong_wolfe", steps that line search picks from there, stopping on
    tolerance_grad, tolerance_change or max_eval as PyTorch does.

    Example:
        >>> w = kael.tensor([3.0, -1.0], requires_grad=True)
        >>> optimizer = kael.optim.LBFGS([w], lr=1.0)
        >>> def closure():
        ...     optimizer.zero_grad()
        ...     loss = ((w - 1.0) ** 2).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = optimizer.step(closure)
        >>> [round(x, 4) for x in w.tolist()]
        [1.0, 1.0]
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got "
                             f"{line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        return _kael.cat([(p.grad if p.grad is not None else _kael.zeros(
            p.shape, dtype=p.dtype, device=p.device)).reshape(-1) for p in self._params])

    def _add(self, step, direction):
        offset = 0
        for p in self._params:
            count = p.numel()
            p.add_(step * direction[offset:offset + count].view(*p.shape))
            offset += count

    def _values(self):
        return [p.detach().clone() for p in self._params]

    def _set(self, values):
        for p, value in zip(self._params, values):
            p.copy_(value)

    def _line_search(self, closure, loss, g, d, t, tolerance_change):
        """strong_wolfe along d from the parameters as they are; leaves them at the step taken.
        Returns (loss, flat gradient, step, evaluations)."""
        start = self._values()

        def evaluate(step):
            self._set(start)
            self._add(step, d)
            with enable_grad():
                value = float(closure())
            return value, self._flat_grad()

        loss, g, t, evaluations = strong_wolfe(evaluate, lambda grad: _dot(grad, d), t, loss, g,
                                               _dot(g, d), tolerance_change)
        self._set(start)
        self._add(t, d)
        return loss, g, t, evaluations

    def step(self, closure):
        """One optimization step of up to max_iter iterations; returns the first loss."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that recomputes the loss")
        group = self.param_groups[0]
        lr, history_size = group["lr"], group["history_size"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            loss = float(closure())
        state["func_evals"] += 1
        original_loss = loss
        with no_grad():
            g = self._flat_grad()
            if g.abs().max().item() <= tolerance_grad:
                return original_loss
            d, t = state.get("d"), state.get("t")
            old_dirs, old_steps = state.get("old_dirs", []), state.get("old_stps", [])
            ro, h_diag = state.get("ro", []), state.get("H_diag", 1.0)
            previous_g, previous_loss = state.get("prev_flat_grad"), state.get("prev_loss")
            iterations, evaluations = 0, 1
            while iterations < group["max_iter"]:
                iterations += 1
                state["n_iter"] += 1
                if state["n_iter"] == 1:
                    d, old_dirs, old_steps, ro, h_diag = -g, [], [], [], 1.0
                else:
                    y, s = g - previous_g, d * t
                    ys = _dot(y, s)
                    if ys > 1e-10:
                        if len(old_dirs) == history_size:
                            old_dirs.pop(0), old_steps.pop(0), ro.pop(0)
                        old_dirs.append(y), old_steps.append(s), ro.append(1.0 / ys)
                        h_diag = ys / _dot(y, y)
                    alphas = [0.0] * len(old_dirs)
                    q = -g
                    for i in reversed(range(len(old_dirs))):
                        alphas[i] = _dot(old_steps[i], q) * ro[i]
                        q = q - alphas[i] * old_dirs[i]
                    d = r = q * h_diag
                    for i in range(len(old_dirs)):
                        beta = _dot(old_dirs[i], r) * ro[i]
                        r = r + old_steps[i] * (alphas[i] - beta)
                    d = r
                previous_g, previous_loss = g.clone(), loss
                t = min(1.0, 1.0 / g.abs().sum().item()) * lr if state["n_iter"] == 1 else lr
                if _dot(g, d) > -tolerance_change:
                    break
                converged = False
                if group["line_search_fn"] == "strong_wolfe":
                    loss, g, t, used = self._line_search(closure, loss, g, d, t,
                                                         tolerance_change)
                    converged = g.abs().max().item() <= tolerance_grad
                    evaluations += used
                    state["func_evals"] += used
                else:
                    self._add(t, d)
                if group["line_search_fn"] is None and iterations != group["max_iter"]:
                    with enable_grad():
                        loss = float(closure())
                    g = self._flat_grad()
                    converged = g.abs().max().item() <= tolerance_grad
                    evaluations += 1
                    state["func_evals"] += 1
                if iterations == group["max_iter"] or evaluations >= group["max_eval"] or \
                        converged:
                    break
                if (d * t).abs().max().item() <= tolerance_change or \
                        abs(loss - previous_loss) < tolerance_change:
                    break
            state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_steps, ro=ro, H_diag=h_diag,
                         prev_flat_grad=previous_g, prev_loss=previous_loss)
        return original_loss

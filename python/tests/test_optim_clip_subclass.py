"""kael.nn.utils.clip_grad_norm_ / clip_grad_value_ against torch, and Python subclasses of
kael.optim.Optimizer (param_groups, state per parameter, inherited state_dict and zero_grad)."""
import math

import numpy as np
import pytest
import torch

import kael


def _with_grads(device, scale=1.0, seed=0):
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(shape) * scale for shape in [(3, 4), (5,), (2, 2, 2)]]
    ours, theirs = [], []
    for g in grads:
        p = kael.zeros(*g.shape, device=device, requires_grad=True)
        p.grad = kael.tensor(g.astype(np.float32), device=device)
        t = torch.zeros(*g.shape, requires_grad=True)
        t.grad = torch.tensor(g, dtype=torch.float32)
        ours.append(p)
        theirs.append(t)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(device, norm_type, max_norm):
    ours, theirs = _with_grads(device)
    total = kael.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    assert total.shape == () and total.device == kael.device(device)
    assert total.dtype == kael.float32
    assert total.item() == pytest.approx(expected.item(), rel=1e-5)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.cpu().numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-7)


def test_clip_grad_norm_takes_one_tensor_and_skips_missing_grads(device):
    p = kael.ones(4, device=device, requires_grad=True)
    q = kael.ones(2, device=device, requires_grad=True)
    p.grad = kael.full((4,), 2.0, device=device)
    assert kael.nn.utils.clip_grad_norm_(p, 100.0).item() == pytest.approx(4.0)
    assert p.grad.cpu().tolist() == [2.0] * 4  # below max_norm: unchanged
    assert kael.nn.utils.clip_grad_norm_([p, q], 1.0).item() == pytest.approx(4.0)
    assert q.grad is None
    assert kael.nn.utils.clip_grad_norm_([q], 1.0).item() == 0.0


def test_clip_grad_norm_nonfinite(device):
    p = kael.ones(2, device=device, requires_grad=True)
    p.grad = kael.tensor([1.0, math.inf], device=device)
    with pytest.raises(ValueError, match="clip_grad_norm_.*non-finite"):
        kael.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
    total = kael.nn.utils.clip_grad_norm_([p], 1.0)  # scales anyway, as PyTorch
    assert math.isinf(total.item())
    with pytest.raises(ValueError, match="norm_type"):
        kael.nn.utils.clip_grad_norm_([p], 1.0, norm_type=0.0)


def test_clip_grads_on_several_devices_is_an_error(device):
    if device == "cpu":
        pytest.skip("needs a second device")
    a = kael.ones(2, requires_grad=True)
    b = kael.ones(2, device=device, requires_grad=True)
    a.grad, b.grad = kael.ones(2), kael.ones(2, device=device)
    with pytest.raises(ValueError, match="clip_grad_norm_: gradients are on"):
        kael.nn.utils.clip_grad_norm_([a, b], 1.0)
    with pytest.raises(ValueError, match="clip_grad_value_: gradients are on"):
        kael.nn.utils.clip_grad_value_([a, b], 1.0)


def test_clip_grad_value_matches_torch(device):
    ours, theirs = _with_grads(device, scale=2.0)
    kael.nn.utils.clip_grad_value_(ours, 0.7)
    torch.nn.utils.clip_grad_value_(theirs, 0.7)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.cpu().numpy(), t.grad.numpy())


class SignSGD(kael.optim.Optimizer):
    """A user's optimizer: steps by the sign of a running average of the gradient."""

    def __init__(self, params, lr=0.1, beta=0.5):
        super().__init__(params, dict(lr=lr, beta=beta))

    def step(self, closure=None):
        loss = self._loss_of(closure)
        with kael.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    if "average" not in state:
                        state["average"] = kael.zeros_like(p)
                        state["count"] = 0
                    state["average"] = state["average"] * group["beta"] + p.grad
                    state["count"] += 1
                    p.copy_(p - group["lr"] * kael.sign(state["average"]))
        return loss


def _reference_sign_sgd(values, grads_of, lrs, beta, steps):
    values = [v.copy() for v in values]
    averages = [np.zeros_like(v) for v in values]
    for _ in range(steps):
        for i, g in enumerate(grads_of(values)):
            averages[i] = averages[i] * beta + g
            values[i] = values[i] - lrs[i] * np.sign(averages[i])
    return values


def test_python_subclass_steps_groups_and_keeps_state(device):
    start = [np.array([1.0, -2.0, 0.5], np.float32), np.array([3.0, 0.25], np.float32)]
    params = [kael.tensor(v, device=device).requires_grad_(True) for v in start]
    optimizer = SignSGD([{"params": [params[0]]}, {"params": [params[1]], "lr": 0.05}])
    for _ in range(4):
        optimizer.zero_grad()
        sum((p * p).sum() for p in params).backward()
        optimizer.step()
    expected = _reference_sign_sgd(start, lambda vs: [2 * v for v in vs], [0.1, 0.05], 0.5, 4)
    for p, e in zip(params, expected):
        np.testing.assert_allclose(p.cpu().numpy(), e, rtol=1e-6)
    # state[p] is found from any Python object referring to the parameter
    same = optimizer.param_groups[0]["params"][0]
    assert optimizer.state[params[0]] is optimizer.state[same]
    assert optimizer.state[params[0]]["count"] == 4


def test_python_subclass_inherits_state_dict_and_zero_grad(device):
    p = kael.ones(3, device=device, requires_grad=True)
    optimizer = SignSGD([p], lr=0.2)
    p.sum().backward()
    optimizer.step()
    saved = optimizer.state_dict()
    assert saved["param_groups"] == [{"lr": 0.2, "beta": 0.5, "params": [0]}]
    assert saved["state"][0]["count"] == 1
    q = kael.ones(3, device=device, requires_grad=True)
    other = SignSGD([q], lr=9.0)
    other.load_state_dict(saved)
    assert other.param_groups[0]["lr"] == 0.2
    assert other.state[q]["average"].cpu().tolist() == [1.0, 1.0, 1.0]
    optimizer.zero_grad()
    assert p.grad is None
    loss = optimizer.step(lambda: (p * 2).sum())
    assert loss.item() == pytest.approx(2 * 3 * 0.8)


def test_parameters_are_hashable_by_identity_not_by_value():
    a = kael.zeros(2, requires_grad=True)
    b = kael.zeros(2, requires_grad=True)
    state = kael.optim.optimizer.ParamState()
    state[a]["x"] = 1
    assert b not in state and a in state
    assert list(state) == [a] or hash(list(state)[0]) == hash(a)
    with pytest.raises(TypeError, match="keyed by tensors"):
        state["a"]

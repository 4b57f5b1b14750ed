"""kael.optim's SGD, Adam and AdamW against torch.optim: trajectories with two parameter groups,
param_groups edits, zero_grad, state_dict round trips and resuming, on every device."""
import numpy as np
import pytest
import torch

import kael

SHAPES = [(4, 3), (3,), (2, 5)]


def _values(seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape) for shape in SHAPES]


def _pair(device, seed=0):
    """The same parameters in kael (on device) and in torch, float32."""
    arrays = _values(seed)
    ours = [kael.tensor(a.astype(np.float32), device=device).requires_grad_(True) for a in arrays]
    theirs = [torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in arrays]
    return ours, theirs


def _loss(params, step, lib):
    """A loss whose gradients change with the parameters and the step."""
    total = None
    for index, p in enumerate(params):
        term = ((p * p * (0.5 + 0.1 * index)).sum() + (p * (step + 1.0) * 0.3).sum())
        total = term if total is None else total + term
    return total


def _groups(params, options):
    first, second = options
    return [{"params": params[:2], **first}, {"params": params[2:], **second}]


CASES = [
    ("SGD", dict(lr=0.05, momentum=0.9), [{}, {"lr": 0.01, "weight_decay": 0.1}]),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True), [{"weight_decay": 0.05}, {"lr": 0.02}]),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.3), [{}, {"momentum": 0.0}]),
    ("SGD", dict(lr=0.1, weight_decay=0.01), [{}, {"lr": 0.02}]),
    ("Adam", dict(lr=0.01), [{}, {"lr": 0.05, "betas": (0.8, 0.99), "weight_decay": 0.1}]),
    ("Adam", dict(lr=0.02, eps=1e-6), [{"weight_decay": 0.01}, {"eps": 1e-3}]),
    ("AdamW", dict(lr=0.01), [{"weight_decay": 0.1}, {"weight_decay": 0.0, "lr": 0.03}]),
    ("AdamW", dict(lr=0.02, betas=(0.85, 0.95)), [{}, {"betas": (0.9, 0.999)}]),
]


def _make(name, params, defaults, groups, lib):
    return getattr(lib.optim, name)(_groups(params, groups), **defaults)


def _run(optimizer, params, steps, lib, first=0):
    for step in range(first, first + steps):
        optimizer.zero_grad()
        _loss(params, step, lib).backward()
        optimizer.step()


def _assert_close(ours, theirs, **tolerance):
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(),
                                   **(tolerance or dict(rtol=1e-4, atol=1e-5)))


@pytest.mark.parametrize("name,defaults,groups", CASES)
def test_trajectory_matches_torch_over_twenty_steps(device, name, defaults, groups):
    ours, theirs = _pair(device)
    mine = _make(name, ours, defaults, groups, kael)
    reference = _make(name, theirs, defaults, groups, torch)
    _run(mine, ours, 20, kael)
    _run(reference, theirs, 20, torch)
    _assert_close(ours, theirs)
    assert [p.device for p in ours] == [kael.device(device)] * len(ours)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_lr_set_in_param_groups_applies_at_next_step(device, name):
    ours, theirs = _pair(device, seed=1)
    defaults = dict(lr=0.05, momentum=0.9) if name == "SGD" else dict(lr=0.05)
    mine = getattr(kael.optim, name)(ours, **defaults)
    reference = getattr(torch.optim, name)(theirs, **defaults)
    for step in range(6):
        for optimizer in (mine, reference):
            optimizer.param_groups[0]["lr"] = 0.05 / (step + 1)
        _run(mine, ours, 1, kael, first=step)
        _run(reference, theirs, 1, torch, first=step)
    _assert_close(ours, theirs)


def test_param_groups_defaults_and_add_param_group():
    a, b, c = (kael.ones(2, requires_grad=True) for _ in range(3))
    optimizer = kael.optim.Adam([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1,
                                weight_decay=0.01)
    assert optimizer.defaults == {"lr": 0.1, "betas": (0.9, 0.999), "eps": 1e-8,
                                  "weight_decay": 0.01}
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]
    assert optimizer.param_groups[1]["params"][0] is b
    optimizer.add_param_group({"params": [c], "betas": (0.5, 0.6)})
    assert optimizer.param_groups[2]["betas"] == (0.5, 0.6)
    assert optimizer.param_groups[2]["lr"] == 0.1
    with pytest.raises(ValueError, match="more than one parameter group"):
        optimizer.add_param_group({"params": [a.detach().requires_grad_(False), c]})
    with pytest.raises(ValueError, match="more than one parameter group"):
        kael.optim.SGD([{"params": [a]}, {"params": [a]}], lr=0.1)


def test_constructor_errors():
    p = kael.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        kael.optim.SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors"):
        kael.optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        kael.optim.SGD([p * 2], lr=0.1)
    with pytest.raises(ValueError, match="learning rate"):
        kael.optim.Adam([p], lr=-1.0)
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        kael.optim.AdamW([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="Nesterov"):
        kael.optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(TypeError, match="ordered collections"):
        kael.optim.SGD([{"params": {p}}], lr=0.1)


def test_zero_grad_sets_to_none_by_default_or_zeroes_in_place(device):
    p = kael.ones(3, device=device, requires_grad=True)
    optimizer = kael.optim.SGD([p], lr=0.1)
    p.sum().backward()
    grad = p.grad
    optimizer.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.tolist() == [0.0] * 3
    assert grad.tolist() == [0.0] * 3  # the same tensor, zeroed in place
    optimizer.zero_grad()
    assert p.grad is None


def test_step_runs_the_closure_with_grad_enabled(device):
    p = kael.ones(2, device=device, requires_grad=True)
    optimizer = kael.optim.SGD([p], lr=0.25)

    def closure():
        optimizer.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss

    with kael.no_grad():
        loss = optimizer.step(closure)
    assert loss.item() == 2.0
    assert p.tolist() == [0.5, 0.5]


def test_parameters_without_grad_take_no_step_and_get_no_state(device):
    a = kael.ones(2, device=device, requires_grad=True)
    b = kael.ones(2, device=device, requires_grad=True)
    optimizer = kael.optim.Adam([a, b], lr=0.1)
    a.sum().backward()
    optimizer.step()
    assert b.tolist() == [1.0, 1.0]
    assert list(optimizer.state_dict()["state"]) == [0]
    assert a in optimizer.state and b not in optimizer.state


@pytest.mark.parametrize("name,defaults,groups", CASES[:1] + CASES[4:5] + CASES[6:7])
def test_state_dict_layout_matches_torch(name, defaults, groups):
    ours, theirs = _pair("cpu")
    mine = _make(name, ours, defaults, groups, kael)
    reference = _make(name, theirs, defaults, groups, torch)
    _run(mine, ours, 2, kael)
    _run(reference, theirs, 2, torch)
    a, b = mine.state_dict(), reference.state_dict()
    assert sorted(a) == ["param_groups", "state"]
    assert sorted(a["state"]) == sorted(b["state"])
    for index in b["state"]:
        assert sorted(a["state"][index]) == sorted(b["state"][index])
        for key, value in b["state"][index].items():
            np.testing.assert_allclose(np.asarray(a["state"][index][key].tolist()
                                                  if key != "step" else a["state"][index][key]),
                                       value.numpy(), rtol=2e-5, atol=1e-6)
    for group, expected in zip(a["param_groups"], b["param_groups"]):
        assert group["params"] == expected["params"]
        for key in group:
            assert group[key] == expected[key], key


@pytest.mark.parametrize("name,defaults,groups", CASES)
def test_resuming_from_a_state_dict_is_bit_identical(device, name, defaults, groups):
    ours, _ = _pair(device)
    uninterrupted = _make(name, ours, defaults, groups, kael)
    _run(uninterrupted, ours, 5, kael)
    saved = {k: v for k, v in uninterrupted.state_dict().items()}
    snapshot = [p.detach().clone() for p in ours]
    # The saved state on the host, as a checkpoint file would hold it; loading moves it back.
    saved["state"] = {i: {k: v.cpu().clone() if isinstance(v, kael.Tensor) else v
                          for k, v in s.items()} for i, s in saved["state"].items()}
    _run(uninterrupted, ours, 5, kael, first=5)

    resumed_params = [s.clone().requires_grad_(True) for s in snapshot]
    resumed = _make(name, resumed_params, dict(lr=123.0), [{}, {}], kael)
    resumed.load_state_dict(saved)
    for value in resumed.state.values():
        for item in value.values():
            if isinstance(item, kael.Tensor):
                assert item.device == kael.device(device)
    _run(resumed, resumed_params, 5, kael, first=5)
    for a, b in zip(ours, resumed_params):
        assert a.cpu().tolist() == b.cpu().tolist()
    assert [g["lr"] for g in resumed.param_groups] == [g["lr"] for g in uninterrupted.param_groups]


def test_load_state_dict_copies_and_rejects_mismatches():
    ours, _ = _pair("cpu")
    optimizer = kael.optim.Adam(_groups(ours, [{}, {}]), lr=0.1)
    _run(optimizer, ours, 1, kael)
    saved = optimizer.state_dict()
    before = saved["state"][0]["exp_avg"].tolist()
    other = kael.optim.Adam(_groups([p.detach().clone().requires_grad_(True) for p in ours],
                                    [{}, {}]), lr=0.1)
    other.load_state_dict(saved)
    _run(other, other.param_groups[0]["params"] + other.param_groups[1]["params"], 1, kael)
    assert saved["state"][0]["exp_avg"].tolist() == before  # stepping wrote into a copy
    with pytest.raises(ValueError, match="different number of parameter groups"):
        kael.optim.Adam(ours, lr=0.1).load_state_dict(saved)
    with pytest.raises(ValueError, match="doesn't match the size"):
        kael.optim.Adam([{"params": ours[:1]}, {"params": ours[1:]}]).load_state_dict(saved)


def test_state_follows_parameters_moved_between_steps(device):
    model = kael.nn.Linear(3, 1)
    optimizer = kael.optim.Adam(model.parameters(), lr=0.1)
    model(kael.ones(2, 3)).sum().backward()
    optimizer.step()
    model.to(device)  # moves the parameters in place: the optimizer's state follows
    optimizer.zero_grad()
    model(kael.ones(2, 3, device=device)).sum().backward()
    optimizer.step()
    for p in model.parameters():
        assert optimizer.state[p]["exp_avg"].device == kael.device(device)
        assert optimizer.state[p]["step"] == 2.0

"""kael.optim.lr_scheduler against torch.optim.lr_scheduler value by value over 60 steps, with
two parameter groups, and state_dict round trips in the middle of a run."""
import math
import warnings

import pytest
import torch

import kael

STEPS = 60
lr_scheduler = kael.optim.lr_scheduler


def _optimizer(lib, name="SGD"):
    a = (kael if lib is kael else torch).ones(2, requires_grad=True)
    b = (kael if lib is kael else torch).ones(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.03}]
    if name == "SGD":
        return lib.optim.SGD(groups, lr=0.1, momentum=0.9)
    return lib.optim.Adam(groups, lr=0.1)


class Warmup:
    """A callable object: its attributes are saved by LambdaLR.state_dict."""

    def __init__(self, length):
        self.length = length

    def __call__(self, epoch):
        return min(1.0, (epoch + 1) / self.length)


def _builders(lib):
    s = lib.optim.lr_scheduler
    return {
        "StepLR": lambda o: s.StepLR(o, step_size=7, gamma=0.5),
        "MultiStepLR": lambda o: s.MultiStepLR(o, milestones=[5, 20, 20, 41], gamma=0.3),
        "ExponentialLR": lambda o: s.ExponentialLR(o, gamma=0.93),
        "CosineAnnealingLR": lambda o: s.CosineAnnealingLR(o, T_max=17, eta_min=0.001),
        "LambdaLR": lambda o: s.LambdaLR(o, [lambda e: 0.97 ** e, Warmup(10)]),
        "LinearLR": lambda o: s.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=12),
        "SequentialLR": lambda o: s.SequentialLR(o, [
            s.LinearLR(o, start_factor=0.01, total_iters=10),
            s.CosineAnnealingLR(o, T_max=40, eta_min=0.002),
            s.StepLR(o, step_size=3, gamma=0.9)], milestones=[10, 45]),
        "OneCycleLR": lambda o: s.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=STEPS + 1),
        "OneCycleLR3": lambda o: s.OneCycleLR(o, max_lr=0.7, total_steps=STEPS + 1,
                                              anneal_strategy="linear", three_phase=True),
    }


def _lrs(optimizer):
    values = [group["lr"] for group in optimizer.param_groups]
    if "betas" in optimizer.param_groups[0]:
        values += [group["betas"][0] for group in optimizer.param_groups]
    else:
        values += [group["momentum"] for group in optimizer.param_groups]
    return values


def _trajectory(lib, name, optimizer_name="SGD"):
    optimizer = _optimizer(lib, optimizer_name)
    scheduler = _builders(lib)[name](optimizer)
    values = [_lrs(optimizer) + scheduler.get_last_lr()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch warns that optimizer.step() was not called
        for _ in range(STEPS):
            optimizer.step()
            scheduler.step()
            values.append(_lrs(optimizer) + scheduler.get_last_lr())
    return values


@pytest.mark.parametrize("name", sorted(_builders(kael)))
@pytest.mark.parametrize("optimizer_name", ["SGD", "Adam"])
def test_schedule_matches_torch_value_by_value(name, optimizer_name):
    ours = _trajectory(kael, name, optimizer_name)
    theirs = _trajectory(torch, name, optimizer_name)
    assert len(ours) == STEPS + 1
    for step, (a, b) in enumerate(zip(ours, theirs)):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15), f"step {step}"


@pytest.mark.parametrize("name", sorted(_builders(kael)))
def test_state_dict_round_trip_mid_run(name):
    build = _builders(kael)[name]
    optimizer = _optimizer(kael)
    scheduler = build(optimizer)
    for _ in range(23):
        scheduler.step()
    saved_optimizer, saved = optimizer.state_dict(), scheduler.state_dict()
    assert "optimizer" not in saved
    expected = []
    for _ in range(30):
        scheduler.step()
        expected.append(scheduler.get_last_lr())

    fresh = _optimizer(kael)
    restored = build(fresh)
    fresh.load_state_dict(saved_optimizer)
    restored.load_state_dict(saved)
    got = []
    for _ in range(30):
        restored.step()
        got.append(restored.get_last_lr())
    assert got == expected


def test_lambda_state_dict_saves_callable_objects_only():
    scheduler = _builders(kael)["LambdaLR"](_optimizer(kael))
    assert scheduler.state_dict()["lr_lambdas"] == [None, {"length": 10}]


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6] * 4
    for options in [dict(patience=2), dict(mode="max", factor=0.5, patience=1, cooldown=2),
                    dict(threshold_mode="abs", threshold=0.05, patience=0, min_lr=[0.01, 0.02])]:
        ours = lr_scheduler.ReduceLROnPlateau(_optimizer(kael), **options)
        theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(_optimizer(torch), **options)
        for metric in metrics:
            ours.step(kael.tensor(metric))
            theirs.step(metric)
            assert [g["lr"] for g in ours.optimizer.param_groups] == \
                [g["lr"] for g in theirs.optimizer.param_groups]
        assert ours.num_bad_epochs == theirs.num_bad_epochs and ours.best == theirs.best


def test_scheduler_errors():
    optimizer = _optimizer(kael)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        lr_scheduler.StepLR(object(), step_size=1)
    with pytest.raises(KeyError, match="initial_lr"):
        lr_scheduler.StepLR(optimizer, step_size=1, last_epoch=3)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas"):
        lr_scheduler.LambdaLR(optimizer, [lambda e: 1.0])
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        lr_scheduler.SequentialLR(optimizer, [lr_scheduler.ExponentialLR(optimizer, 0.5)], [3])
    with pytest.raises(ValueError, match="total_steps"):
        lr_scheduler.OneCycleLR(optimizer, max_lr=1.0)
    scheduler = lr_scheduler.OneCycleLR(_optimizer(kael), max_lr=1.0, total_steps=2)
    scheduler.step()
    scheduler.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        scheduler.step()


def test_scheduled_lr_reaches_the_step(device):
    p = kael.ones(1, device=device, requires_grad=True)
    optimizer = kael.optim.SGD([p], lr=1.0)
    scheduler = lr_scheduler.ExponentialLR(optimizer, gamma=0.5)
    for _ in range(3):
        scheduler.step()
    p.sum().backward()
    optimizer.step()
    assert p.item() == pytest.approx(1.0 - 0.125) and not math.isnan(p.item())

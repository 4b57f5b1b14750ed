"""kael.compile of a whole training step (forward, backward, Adam/AdamW), as torch.compile
records one with CUDA graphs: Adam's capturable state (the step count and learning rate on the
device, the bias corrections computed there), learning-rate schedules reaching the replays, and
the same parameters as eager training; the capturable step against torch's Adam on every
device."""
import warnings

import numpy as np
import pytest
import torch

import kael

CONFIG = dict(vocab_size=40, block_size=16, layers=2, heads=4, embed=32)



def train(device, compiled, steps=5, optimizer_class=kael.optim.AdamW, clip=None):
    """Losses and final parameters of a small GPT trained on one batch, with a StepLR
    schedule that halves lr every two steps (so replays must see lr change)."""
    kael.manual_seed(3)
    model = kael.nn.GPT(kael.nn.GPTConfig(**CONFIG)).to(device)
    optimizer = optimizer_class(model.parameters(), lr=3e-3, weight_decay=0.1)
    schedule = kael.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    kael.manual_seed(4)
    x = kael.randint(0, CONFIG["vocab_size"], (2, 12)).to(device)
    y = kael.randint(0, CONFIG["vocab_size"], (2, 12)).to(device)

    def step(x, y):
        optimizer.zero_grad(set_to_none=True)
        logits = model(x)
        loss = kael.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        loss.backward()
        if clip is not None:
            kael.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        return loss
    run = kael.compile(step, fullgraph=True) if compiled else step
    losses = []
    for _ in range(steps):
        losses.append(run(x, y).item())
        schedule.step()
    return losses, [p.detach().cpu().numpy() for p in model.parameters()], optimizer, run


@pytest.mark.parametrize("optimizer_class", [kael.optim.Adam, kael.optim.AdamW])
def test_a_compiled_training_step_trains_as_eager_steps_do(graph_device, optimizer_class):
    eager_losses, eager_params, _, _ = train(graph_device, False, optimizer_class=optimizer_class)
    losses, params, optimizer, run = train(graph_device, True, optimizer_class=optimizer_class)
    assert run.compiled.reason is None  # the last calls replayed the recording
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for got, want in zip(params, eager_params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    counts = {state["step"].data_ptr() for state in optimizer.state.values()}
    assert len(counts) == 1  # one count on the device, shared by the parameters
    assert next(iter(optimizer.state.values()))["step"].item() == 5.0
    assert losses[-1] < losses[0]


def test_gradient_clipping_records_with_the_step(graph_device):
    eager_losses, eager_params, _, _ = train(graph_device, False, clip=0.05)
    losses, params, _, run = train(graph_device, True, clip=0.05)
    assert run.compiled.reason is None
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5)
    for got, want in zip(params, eager_params):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_the_first_adam_step_cannot_be_recorded(graph_device):
    w = kael.ones(3).to(graph_device).requires_grad_()
    optimizer = kael.optim.Adam([w], lr=0.1)
    w.grad = kael.ones(3).to(graph_device)
    with pytest.raises(ValueError, match="Adam.step: its first step on .* is inside a recording"):
        kael.DeviceGraph.record(graph_device, optimizer.step)
    optimizer.step()  # outside: the count and lr move to the device
    graph = kael.DeviceGraph.record(graph_device, optimizer.step)
    before = w.detach().cpu().numpy()
    graph.replay()
    assert not np.array_equal(w.detach().cpu().numpy(), before)
    assert optimizer.state[w]["step"].item() == 2.0


def test_a_forward_whose_backward_comes_later_still_runs_eagerly(graph_device):
    layer = kael.nn.Linear(3, 2).to(graph_device)

    @kael.compile
    def forward(x):
        return layer(x).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(3):
            forward(kael.ones(1, 3).to(graph_device)).backward()
    assert "autograd history" in forward.compiled.reason
    assert layer.weight.grad is not None


def torch_adam_steps(values, grads, lrs, decoupled, weight_decay):
    w = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    optimizer = (torch.optim.AdamW if decoupled else torch.optim.Adam)(
        [w], lr=lrs[0], weight_decay=weight_decay)
    for grad, lr in zip(grads, lrs):
        optimizer.param_groups[0]["lr"] = lr
        w.grad = torch.tensor(grad, dtype=torch.float64)
        optimizer.step()
    return w.detach().numpy()


@pytest.mark.parametrize("decoupled", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_the_capturable_step_equals_torchs_adam(device, decoupled, layout):
    """capturable=True on every device, the fused kernel (contiguous) and the composed update
    (a strided parameter), against torch 1.13 in f64 with lr changing between steps."""
    rng = np.random.default_rng(5)
    values = rng.standard_normal(6)
    grads = [rng.standard_normal(6) for _ in range(4)]
    lrs = [0.1, 0.1, 0.05, 0.02]
    if layout == "strided":
        base = kael.zeros(6, 2, dtype=kael.float64).to(device)
        w = base[:, 0]
        w.copy_(kael.tensor(values, dtype=kael.float64).to(device))
        w.requires_grad_()
    else:
        w = kael.tensor(values, dtype=kael.float64).to(device).requires_grad_()
    optimizer = (kael.optim.AdamW if decoupled else kael.optim.Adam)(
        [w], lr=lrs[0], weight_decay=0.1, capturable=True)
    for grad, lr in zip(grads, lrs):
        optimizer.param_groups[0]["lr"] = lr
        w.grad = kael.tensor(grad, dtype=kael.float64).to(device)
        optimizer.step()
    step = optimizer.state[w]["step"]
    assert isinstance(step, kael.Tensor) and str(step.device) == str(kael.device(device))
    np.testing.assert_allclose(w.detach().cpu().numpy(),
                               torch_adam_steps(values, grads, lrs, decoupled, 0.1), rtol=1e-12)


def test_a_loaded_state_moves_its_count_to_the_device(device):
    """A state dict whose step is a number (kael's host count, or torch's cpu tensor) steps
    on from that count once capturable."""
    w = kael.tensor([1.0, -2.0], dtype=kael.float64).to(device).requires_grad_()
    host = kael.optim.Adam([w], lr=0.1, capturable=False)
    for _ in range(2):
        w.grad = kael.tensor([0.5, 0.25], dtype=kael.float64).to(device)
        host.step()
    state = host.state_dict()
    assert state["state"][0]["step"] == 2.0
    v = kael.tensor([1.0, -2.0], dtype=kael.float64).to(device).requires_grad_()
    replay = kael.optim.Adam([v], lr=0.1, capturable=False)
    for _ in range(2):
        v.grad = kael.tensor([0.5, 0.25], dtype=kael.float64).to(device)
        replay.step()
    moved = kael.optim.Adam([v], lr=0.1, capturable=True)
    moved.load_state_dict(replay.state_dict())
    w.grad = v.grad = kael.tensor([0.5, 0.25], dtype=kael.float64).to(device)
    host.step()
    moved.step()
    assert moved.state[v]["step"].item() == 3.0
    np.testing.assert_allclose(v.detach().cpu().numpy(), w.detach().cpu().numpy(), rtol=1e-12)


def test_capturable_must_be_a_flag():
    with pytest.raises(TypeError, match="capturable must be None, True or False"):
        kael.optim.Adam([kael.ones(1, requires_grad=True)], capturable="yes")

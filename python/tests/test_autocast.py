"""kael.autocast (kael.amp.autocast): which ops run in the low dtype and which in float32, that
gradients reach float32 leaves in float32, that regions nest and decorate, and that a small GPT
trained under bfloat16 autocast follows its float32 loss curve."""
import numpy as np
import pytest
import torch

import kael
from kael import nn


def test_linear_and_matmul_run_in_the_low_dtype_and_match_torch_autocast():
    generator = np.random.default_rng(0)
    x = generator.uniform(-1, 1, (5, 8)).astype(np.float32)
    w = generator.uniform(-1, 1, (3, 8)).astype(np.float32)
    b = generator.uniform(-1, 1, (3,)).astype(np.float32)
    with kael.autocast("cpu", dtype=kael.bfloat16):
        got = kael.nn.functional.linear(kael.tensor(x), kael.tensor(w), kael.tensor(b))
        product = kael.tensor(x) @ kael.tensor(w).T
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = torch.nn.functional.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b))
    assert got.dtype == kael.bfloat16 and product.dtype == kael.bfloat16
    assert want.dtype == torch.bfloat16
    np.testing.assert_allclose(np.array(got.float().tolist()), want.float().numpy(),
                               rtol=2 ** -7, atol=2 ** -7)


def test_float32_ops_take_low_precision_inputs_to_float32():
    x = kael.randn(4, 6).bfloat16()
    targets = kael.tensor([0, 5, 2, 1])
    with kael.amp.autocast("cpu"):
        assert kael.amp.is_autocast_enabled("cpu") and not kael.amp.is_autocast_enabled("cuda")
        assert kael.softmax(x, 1).dtype == kael.float32
        assert kael.log_softmax(x, 1).dtype == kael.float32
        assert kael.sum(x).dtype == kael.float32 and x.sum(dim=0).dtype == kael.float32
        assert kael.nn.functional.cross_entropy(x, targets).dtype == kael.float32
        assert kael.nn.functional.mse_loss(x, x).dtype == kael.float32
        assert kael.nn.functional.layer_norm(x, (6,)).dtype == kael.float32
        # torch's cuda list: the other sums and products, logsumexp and norms
        p = kael.sigmoid(x)
        functional = kael.nn.functional
        for result in (kael.prod(x), kael.cumsum(x, 1), kael.cumprod(x, 0),
                       kael.logsumexp(x, 1), kael.norm(x), kael.linalg.vector_norm(x, 3.0),
                       functional.nll_loss(x, targets), functional.l1_loss(x, x),
                       functional.binary_cross_entropy(p, p),
                       functional.binary_cross_entropy_with_logits(x, p)):
            assert result.dtype == kael.float32
        assert kael.mean(x).dtype == kael.bfloat16 and kael.amax(x).dtype == kael.bfloat16
        assert (x * 2).dtype == kael.bfloat16  # not listed: runs as given
    assert not kael.amp.is_autocast_enabled("cpu")
    assert kael.softmax(x, 1).dtype == kael.bfloat16  # outside the region


def test_other_device_types_and_disabled_regions_run_as_given(device):
    a = kael.ones(2, 3, device=device)
    with kael.autocast("cuda" if device == "cpu" else "cpu"):
        assert (a @ a.T).dtype == kael.float32
    with kael.autocast(kael.device(device).type, dtype=kael.float16):
        assert (a @ a.T).dtype == kael.float16
        with kael.autocast(kael.device(device).type, enabled=False):
            assert (a @ a.T).dtype == kael.float32
        assert (a @ a.T).dtype == kael.float16


def test_gradients_reach_float32_leaves_in_float32(device):
    kael.manual_seed(1)
    layer = nn.Linear(6, 4).to(device)
    x = kael.randn(3, 6, device=device)
    with kael.autocast(kael.device(device).type, dtype=kael.bfloat16):
        out = layer(x)
        loss = kael.nn.functional.mse_loss(out, kael.zeros(3, 4, device=device))
    assert out.dtype == kael.bfloat16 and loss.dtype == kael.float32
    loss.backward()
    assert layer.weight.dtype == kael.float32 and layer.weight.grad.dtype == kael.float32
    reference = nn.Linear(6, 4).to(device)
    reference.load_state_dict(layer.state_dict())
    expected = kael.nn.functional.mse_loss(reference(x), kael.zeros(3, 4, device=device))
    expected.backward()
    np.testing.assert_allclose(np.array(layer.weight.grad.tolist()),
                               np.array(reference.weight.grad.tolist()), rtol=0.05, atol=0.02)


def test_decorator_and_arguments_are_checked():
    @kael.autocast("cpu")
    def product(a, b):
        return a @ b

    a = kael.ones(2, 2)
    assert product(a, a).dtype == kael.bfloat16 and (a @ a).dtype == kael.float32
    with pytest.raises(ValueError, match="bfloat16 or kael.float16"):
        kael.autocast("cpu", dtype=kael.float32)
    with pytest.raises(TypeError, match="device_type"):
        kael.autocast(0)


def train_char_gpt(autocast_dtype, steps=40):
    kael.manual_seed(7)
    config = nn.GPTConfig(vocab_size=12, block_size=16, layers=2, heads=2, embed=32)
    model = nn.GPT(config)
    optimizer = kael.optim.AdamW(model.parameters(), lr=3e-3)
    text = np.tile(np.arange(12), 40)
    losses = []
    for step in range(steps):
        start = (step * 5) % (len(text) - 17)
        tokens = kael.tensor(text[start:start + 16].reshape(1, 16))
        targets = kael.tensor(text[start + 1:start + 17].reshape(1, 16))
        if autocast_dtype is None:
            loss = model.loss(tokens, targets)
        else:
            with kael.autocast("cpu", dtype=autocast_dtype):
                loss = model.loss(tokens, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, model


def test_a_small_gpt_under_bfloat16_autocast_tracks_its_float32_loss_curve():
    full, _ = train_char_gpt(None)
    mixed, model = train_char_gpt(kael.bfloat16)
    assert all(p.dtype == kael.float32 for p in model.parameters())
    assert mixed[-1] < 0.5 * mixed[0]  # it learns
    tail_full, tail_mixed = np.mean(full[-5:]), np.mean(mixed[-5:])
    assert abs(tail_mixed - tail_full) <= 0.02 * tail_full + 0.02, (full[-5:], mixed[-5:])


def test_grad_scaler_skips_overflowing_steps_and_recovers_in_float16():
    kael.manual_seed(3)
    model = nn.Linear(8, 1)
    optimizer = kael.optim.SGD(model.parameters(), lr=0.05, fused=True)
    scaler = kael.amp.GradScaler(init_scale=2.0 ** 40, growth_interval=3)
    x = kael.randn(32, 8)
    y = x.sum(dim=1, keepdim=True)
    losses, scales, skipped = [], [], 0
    for _ in range(60):
        before = model.weight.tolist()
        with kael.autocast("cpu", dtype=kael.float16):
            loss = kael.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()  # float16 gradients overflow while the scale is huge
        scaler.step(optimizer)
        if model.weight.tolist() == before:
            skipped += 1
        scaler.update()
        losses.append(loss.item())
        scales.append(scaler.get_scale())
    assert skipped >= 10 and scales[0] < 2.0 ** 40  # it backed off past the overflow
    assert all(np.isfinite(p.tolist()).all() for p in model.parameters())
    assert losses[-1] < 0.3 * losses[0]  # then trained
    assert any(b > a for a, b in zip(scales, scales[1:]))  # and grew after good steps
    state = scaler.state_dict()
    restored = kael.amp.GradScaler()
    restored.load_state_dict(state)
    assert restored.get_scale() == scaler.get_scale()


def test_grad_scaler_rules_match_torch():
    w = kael.tensor([1.0, 2.0], requires_grad=True)
    optimizer = kael.optim.Adam([w], lr=0.1, foreach=True)
    scaler = kael.amp.GradScaler(init_scale=4.0)
    scaler.scale(w.sum()).backward()
    assert w.grad.tolist() == [4.0, 4.0]
    scaler.unscale_(optimizer)
    assert w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="already been called"):
        scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    assert scaler.get_scale() == 4.0
    disabled = kael.amp.GradScaler(enabled=False)
    assert disabled.scale(w) is w and disabled.get_scale() == 1.0
    with pytest.raises(TypeError, match="fused"):
        kael.optim.AdamW([w], fused="yes")

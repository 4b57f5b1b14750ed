"""kael.nn.functional and the loss modules against torch.nn.functional, on every device:
values, gradients, reductions, ignore_index, weights, label smoothing and (N, C, d) inputs."""
import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import kael
import kael.nn.functional as F


def k(array, device, requires_grad=False):
    return kael.tensor(np.asarray(array).tolist(), device=device,
                       dtype=kael.float64 if np.asarray(array).dtype == np.float64 else None,
                       requires_grad=requires_grad)


def t(array, requires_grad=False):
    return torch.tensor(np.asarray(array), requires_grad=requires_grad)


def close(kael_tensor, torch_tensor, tol=1e-5):
    np.testing.assert_allclose(np.array(kael_tensor.cpu().tolist()),
                               torch_tensor.detach().numpy(), rtol=tol, atol=tol)


RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((6, 4))
TARGET = np.array([0, 3, -100, 1, 2, -100])
LOGITS_3D = RNG.standard_normal((2, 4, 5))
TARGET_3D = np.array([[0, 1, 2, 3, -100], [3, 3, 0, -100, 1]])
WEIGHT = np.array([0.5, 1.0, 2.0, 1.5])


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", ["2d", "3d"])
def test_cross_entropy_matches_torch(device, reduction, label_smoothing, weighted, shape):
    logits, target = (LOGITS, TARGET) if shape == "2d" else (LOGITS_3D, TARGET_3D)
    x, tx = k(logits, device, True), t(logits, True)
    options = dict(reduction=reduction, label_smoothing=label_smoothing)
    ours = F.cross_entropy(x, k(target, device), weight=k(WEIGHT, device) if weighted else None,
                           **options)
    theirs = TF.cross_entropy(tx, t(target), weight=t(WEIGHT) if weighted else None, **options)
    close(ours, theirs)
    ours.sum().backward()
    theirs.sum().backward()
    close(x.grad, tx.grad)


def test_cross_entropy_defaults_use_fused_kernel_and_all_ignored_gives_nan(device):
    x = k(LOGITS, device)
    full = np.array([0, 3, 1, 1, 2, 0])
    close(F.cross_entropy(x, k(full, device)), TF.cross_entropy(t(LOGITS), t(full)))
    all_ignored = F.cross_entropy(x, k(np.full(6, -100), device))
    assert np.isnan(all_ignored.item())
    with pytest.raises(IndexError, match="cross_entropy"):
        F.cross_entropy(x, k(np.array([0, 4, 1, 1, 2, 0]), device), label_smoothing=0.1)


def test_cross_entropy_probability_targets(device):
    probabilities = np.abs(RNG.standard_normal((6, 4)))
    probabilities /= probabilities.sum(1, keepdims=True)
    x, tx = k(LOGITS, device, True), t(LOGITS, True)
    ours = F.cross_entropy(x, k(probabilities, device), weight=k(WEIGHT, device),
                           label_smoothing=0.1)
    theirs = TF.cross_entropy(tx, t(probabilities), weight=t(WEIGHT), label_smoothing=0.1)
    close(ours, theirs)
    ours.backward()
    theirs.backward()
    close(x.grad, tx.grad)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_nll_loss_matches_torch(device, reduction):
    log_probs = np.log(np.exp(LOGITS_3D) / np.exp(LOGITS_3D).sum(1, keepdims=True))
    x, tx = k(log_probs, device, True), t(log_probs, True)
    ours = F.nll_loss(x, k(TARGET_3D, device), weight=k(WEIGHT, device), reduction=reduction)
    theirs = TF.nll_loss(tx, t(TARGET_3D), weight=t(WEIGHT), reduction=reduction)
    close(ours, theirs)
    ours.sum().backward()
    theirs.sum().backward()
    close(x.grad, tx.grad)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_elementwise_losses_match_torch(device, reduction):
    a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    probabilities, labels = 1 / (1 + np.exp(-a)), (b > 0).astype(np.float64)
    weight, pos_weight = np.abs(RNG.standard_normal(4)), np.abs(RNG.standard_normal(4))
    cases = [
        (F.mse_loss, TF.mse_loss, a, b, {}),
        (F.l1_loss, TF.l1_loss, a, b, {}),
        (F.binary_cross_entropy, TF.binary_cross_entropy, probabilities, labels,
         {"weight": weight}),
        (F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits, a * 10, labels,
         {"weight": weight, "pos_weight": pos_weight}),
    ]
    for ours_fn, theirs_fn, x_value, target, extra in cases:
        x, tx = k(x_value, device, True), t(x_value, True)
        ours = ours_fn(x, k(target, device), reduction=reduction,
                       **{key: k(v, device) for key, v in extra.items()})
        theirs = theirs_fn(tx, t(target), reduction=reduction,
                           **{key: t(v) for key, v in extra.items()})
        close(ours, theirs)
        ours.sum().backward()
        theirs.sum().backward()
        close(x.grad, tx.grad)


def test_loss_modules_match_functional(device):
    x, target = k(LOGITS, device), k(TARGET, device)
    module = kael.nn.CrossEntropyLoss(weight=kael.tensor(WEIGHT.tolist()), label_smoothing=0.1)
    module.to(device)
    assert module.weight.device == kael.device(device)
    assert list(module.state_dict()) == ["weight"]
    close(module(x, target), TF.cross_entropy(t(LOGITS), t(TARGET), weight=t(WEIGHT),
                                              label_smoothing=0.1))
    assert kael.nn.MSELoss(reduction="sum")(x, x).item() == 0
    assert kael.nn.L1Loss()(x, x).item() == 0
    with pytest.raises(ValueError, match="reduction"):
        kael.nn.MSELoss(reduction="average")
    with pytest.raises(ValueError, match="mse_loss"):
        F.mse_loss(x, x, reduction="average")


def test_composite_losses_pass_gradcheck():
    x = kael.tensor(LOGITS_3D.tolist(), dtype=kael.float64, requires_grad=True)
    target = kael.tensor(TARGET_3D.tolist())
    weight = kael.tensor(WEIGHT.tolist(), dtype=kael.float64)
    assert kael.autograd.gradcheck(
        lambda value: F.cross_entropy(value, target, weight=weight, label_smoothing=0.3), [x])
    p = kael.tensor([[0.2, 0.7], [0.9, 0.4]], dtype=kael.float64, requires_grad=True)
    labels = kael.tensor([[0.0, 1.0], [1.0, 0.0]], dtype=kael.float64)
    assert kael.autograd.gradcheck(lambda value: F.binary_cross_entropy(value, labels), [p])
    assert kael.autograd.gradcheck(
        lambda value: F.binary_cross_entropy_with_logits(value, labels), [p])


def test_layer_functions_match_torch(device):
    x_value = RNG.standard_normal((2, 3, 4))
    w_value, b_value = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    x, tx = k(x_value, device, True), t(x_value, True)
    ours = F.layer_norm(x, (3, 4), k(w_value, device), k(b_value, device))
    theirs = TF.layer_norm(tx, (3, 4), t(w_value), t(b_value))
    close(ours, theirs)
    close(F.silu(x), TF.silu(tx))
    close(F.gelu(x, approximate="tanh"), TF.gelu(tx, approximate="tanh"))
    close(F.softmax(x, dim=1), TF.softmax(tx, dim=1))
    close(F.linear(x, k(w_value, device)), TF.linear(tx, t(w_value)))
    close(F.pad(x, (1, 2, -1, 0), value=3.0), TF.pad(tx, (1, 2, -1, 0), value=3.0))
    close(F.one_hot(k(np.array([[0, 2], [1, 1]]), device)),
          TF.one_hot(t(np.array([[0, 2], [1, 1]]))))
    assert F.dropout(x, 0.5, training=False).tolist() == x.tolist()
    (ours.sum() + F.pad(x, (1, 1), value=1.0).square().sum()).backward()
    (theirs.sum() + TF.pad(tx, (1, 1), value=1.0).square().sum()).backward()
    close(x.grad, tx.grad)


def test_embedding_padding_rows_get_no_gradient(device):
    weight_value = RNG.standard_normal((5, 3))
    indices = np.array([[0, 2, 0], [4, 2, 1]])
    w, tw = k(weight_value, device, True), t(weight_value, True)
    ours = F.embedding(k(indices, device), w, padding_idx=2)
    theirs = TF.embedding(t(indices), tw, padding_idx=2)
    close(ours, theirs)
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    close(w.grad, tw.grad)
    assert w.grad[2].abs().sum().item() == 0
    table = kael.nn.Embedding(5, 3, padding_idx=-1)
    assert table.padding_idx == 4 and table.weight[4].abs().sum().item() == 0


@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal"])
def test_scaled_dot_product_attention_matches_torch(device, mask):
    q, kk, v = (RNG.standard_normal((2, 2, 4, 8)) for _ in range(3))
    key = RNG.standard_normal((2, 2, 6, 8))
    allowed = RNG.random((4, 6)) > 0.3
    allowed[:, 0] = True
    masks = {"none": (None, None), "bool": (allowed, allowed),
             "float": (allowed * -1.5, allowed * -1.5), "causal": (None, None)}
    ours_mask, theirs_mask = masks[mask]
    key_value = kk if mask == "causal" else key
    tq, tk, tv = t(q, True), t(key_value, True), t(key_value, True)
    x, y, z = k(q, device, True), k(key_value, device, True), k(key_value, device, True)
    theirs = TF.scaled_dot_product_attention(
        tq, tk, tv, attn_mask=None if theirs_mask is None else t(theirs_mask),
        is_causal=mask == "causal") if hasattr(TF, "scaled_dot_product_attention") else None
    ours = F.scaled_dot_product_attention(
        x, y, z, attn_mask=None if ours_mask is None else k(ours_mask, device),
        is_causal=mask == "causal")
    if theirs is None:  # torch 1.13 has no fused attention: its composed definition
        scores = tq @ tk.transpose(-2, -1) / np.sqrt(8)
        if mask == "bool":
            scores = scores.masked_fill(~t(allowed), float("-inf"))
        elif mask == "float":
            scores = scores + t(theirs_mask)
        elif mask == "causal":
            scores = scores.masked_fill(~torch.ones(4, 4, dtype=torch.bool).tril(), float("-inf"))
        theirs = scores.softmax(-1) @ tv
    close(ours, theirs)
    ours.square().sum().backward()
    theirs.square().sum().backward()
    close(x.grad, tq.grad)
    close(y.grad, tk.grad)


def test_composite_layer_functions_pass_gradcheck():
    def f64(shape, seed):
        return kael.tensor(np.random.default_rng(seed).standard_normal(shape).tolist(),
                           dtype=kael.float64, requires_grad=True)
    x, w = f64((2, 3, 2), 1), f64((3, 2), 2)
    assert kael.autograd.gradcheck(lambda a, b: F.layer_norm(a, (3, 2), weight=b), [x, w])
    assert kael.autograd.gradcheck(lambda a: F.pad(a, (1, -1, 2, 0), value=0.5), [x])
    q, key = f64((2, 3, 4), 3), f64((2, 5, 4), 4)
    allowed = kael.tensor([[True, False, True, True, True]] * 3)
    assert kael.autograd.gradcheck(
        lambda a, b: F.scaled_dot_product_attention(a, b, b, attn_mask=allowed), [q, key])

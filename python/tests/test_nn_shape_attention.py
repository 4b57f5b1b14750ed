"""MultiheadAttention against torch.nn.MultiheadAttention (a torch state_dict loads; outputs,
weights and gradients agree, with masks), the shape layers and nn.init, on every device."""
import math

import numpy as np
import pytest
import torch

import kael
from kael import nn


def to_kael(value, device, requires_grad=False):
    return kael.tensor(value.detach().numpy().tolist(), device=device, requires_grad=requires_grad)


def close(ours, theirs, tol=1e-4):
    np.testing.assert_allclose(np.array(ours.cpu().tolist()), theirs.detach().numpy(),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "padding", "attn_bool", "attn_float", "both"])
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_matches_torch(device, batch_first, masks, need_weights):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
    ours = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    assert sorted(ours.state_dict()) == sorted(theirs.state_dict())
    ours.load_state_dict({name: to_kael(value, "cpu") for name, value in theirs.state_dict().items()})
    ours.to(device)
    shape_q, shape_k = ((3, 5, 8), (3, 6, 8)) if batch_first else ((5, 3, 8), (6, 3, 8))
    query, key = torch.randn(*shape_q, requires_grad=True), torch.randn(*shape_k, requires_grad=True)
    padding = torch.zeros(3, 6, dtype=torch.bool)
    padding[0, 4:] = True
    forbidden = torch.rand(5, 6) > 0.7
    forbidden[:, 0] = False
    options = {"none": {}, "padding": {"key_padding_mask": padding},
               "attn_bool": {"attn_mask": forbidden},
               "attn_float": {"attn_mask": forbidden.double().float() * -2.0},
               "both": {"key_padding_mask": padding, "attn_mask": forbidden}}[masks]
    out_t, weights_t = theirs(query, key, key, need_weights=need_weights, **options)
    q, k = to_kael(query, device, True), to_kael(key, device, True)
    out, weights = ours(q, k, k, need_weights=need_weights,
                        **{name: to_kael(value, device) for name, value in options.items()})
    close(out, out_t)
    if need_weights:
        close(weights, weights_t)
    else:
        assert weights is None
    (out.square().sum()).backward()
    (out_t.square().sum()).backward()
    close(q.grad, query.grad)
    close(k.grad, key.grad)
    close(ours.in_proj_weight.grad, theirs.in_proj_weight.grad)
    close(ours.out_proj.weight.grad, theirs.out_proj.weight.grad)


def test_multihead_attention_per_head_weights_unbatched_and_causal(device):
    torch.manual_seed(1)
    theirs = torch.nn.MultiheadAttention(8, 4)
    ours = nn.MultiheadAttention(8, 4)
    ours.load_state_dict({name: to_kael(value, "cpu") for name, value in theirs.state_dict().items()})
    ours.to(device)
    x = torch.randn(5, 8)
    out_t, weights_t = theirs(x, x, x, average_attn_weights=False)
    out, weights = ours(to_kael(x, device), to_kael(x, device), to_kael(x, device),
                        average_attn_weights=False)
    assert weights.shape == (4, 5, 5)
    close(out, out_t)
    close(weights, weights_t)
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)
    out_t, _ = theirs(x, x, x, attn_mask=causal, need_weights=False)
    for need_weights in (True, False):  # the fused kernel and the composed path
        out, _ = ours(to_kael(x, device), to_kael(x, device), to_kael(x, device),
                      is_causal=True, need_weights=need_weights)
        close(out, out_t)
    with pytest.raises(ValueError, match="divisible"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(ValueError, match="attn_mask"):
        ours(to_kael(x, device), to_kael(x, device), to_kael(x, device),
             attn_mask=kael.zeros(2, 2, device=device) > 0)


def test_shape_layers(device):
    x = kael.ones(2, 3, 4, device=device)
    assert nn.Flatten()(x).shape == (2, 12)
    assert nn.Flatten(0, 1)(x).shape == (6, 4)
    assert nn.Unflatten(2, (2, 2))(x).shape == (2, 3, 2, 2)
    assert nn.Identity(3, unused=True)(x) is x
    values = kael.tensor([[-1.0, 0.0, 2.0]], device=device)
    assert nn.Softmax(dim=1)(values).sum().item() == pytest.approx(1.0)
    assert nn.LogSoftmax(dim=1)(values).exp().sum().item() == pytest.approx(1.0)
    expected = torch.nn.functional.silu(torch.tensor([[-1.0, 0.0, 2.0]]))
    close(nn.SiLU()(values), expected)


def test_init_fills_in_place_with_pytorch_statistics():
    kael.manual_seed(0)
    weight = nn.Linear(400, 300).weight
    fan_in, fan_out = 400, 300
    assert nn.init.kaiming_uniform_(weight, nonlinearity="relu") is weight
    bound = math.sqrt(6 / fan_in)
    assert weight.abs().max().item() <= bound
    assert weight.abs().max().item() > 0.95 * bound
    assert weight.requires_grad and weight.grad is None
    nn.init.kaiming_normal_(weight, mode="fan_out")
    assert abs(weight.std().item() - math.sqrt(2 / (1 + 0.01 ** 2)) / math.sqrt(fan_out)) < 0.003
    nn.init.xavier_uniform_(weight, gain=2.0)
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert 0.95 * bound < weight.abs().max().item() <= bound
    nn.init.xavier_normal_(weight)
    assert abs(weight.std().item() - math.sqrt(2 / (fan_in + fan_out))) < 0.002
    nn.init.normal_(weight, mean=3.0, std=0.5)
    assert abs(weight.mean().item() - 3.0) < 0.01 and abs(weight.std().item() - 0.5) < 0.01
    nn.init.uniform_(weight, -2.0, -1.0)
    assert -2.0 <= weight.min().item() and weight.max().item() < -1.0
    assert abs(weight.mean().item() + 1.5) < 0.01
    nn.init.trunc_normal_(weight, mean=0.0, std=1.0, a=-0.5, b=1.0)
    assert -0.5 <= weight.min().item() and weight.max().item() <= 1.0
    nn.init.trunc_normal_(weight, mean=0.0, std=1.0, a=3.0, b=4.0)  # far in the tail
    assert 3.0 <= weight.min().item() and weight.max().item() <= 4.0
    nn.init.eye_(weight)
    assert weight.sum().item() == 300 and weight[5, 5].item() == 1
    nn.init.constant_(weight, 0.25)
    assert weight.tolist()[0][:2] == [0.25, 0.25]
    assert nn.init.ones_(kael.empty(2)).tolist() == [1.0, 1.0]
    assert nn.init.zeros_(kael.empty(2)).tolist() == [0.0, 0.0]
    conv = kael.empty(16, 8, 3, 3)  # fans count the receptive field, as PyTorch
    nn.init.kaiming_uniform_(conv, a=math.sqrt(5))
    assert conv.abs().max().item() <= 1 / math.sqrt(8 * 9)
    for name in ("linear", "sigmoid", "tanh", "relu", "selu"):
        assert nn.init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(
        torch.nn.init.calculate_gain("leaky_relu", 0.2))
    with pytest.raises(ValueError, match="fewer than 2"):
        nn.init.xavier_uniform_(kael.empty(3))


def test_init_works_on_every_device(device):
    weight = kael.empty(20, 10, device=device)
    nn.init.uniform_(weight, -1.0, 1.0)
    assert weight.device == kael.device(device) and weight.abs().max().item() <= 1.0

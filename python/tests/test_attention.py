"""kael.scaled_dot_product_attention against torch's composition of the same formula."""
import numpy as np
import pytest
import torch

import kael


def torch_reference(q, k, v, is_causal, scale=None):
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if is_causal:
        queries, keys = q.shape[2], k.shape[2]
        hidden = torch.arange(keys)[None, :] > torch.arange(queries)[:, None] + (keys - queries)
        scores = scores.masked_fill(hidden, float("-inf"))
    return scores.softmax(-1) @ v


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("sizes", [(2, 3, 5, 5, 8), (1, 2, 3, 7, 16), (1, 1, 1, 9, 1)])
def test_forward_and_gradients_match_torch(device, is_causal, sizes):
    batch, heads, queries, keys, dims = sizes
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((batch, heads, tokens, dims))
              for tokens in (queries, keys, keys)]
    weights = rng.standard_normal((batch, heads, queries, dims))
    ours = [kael.tensor(a.tolist(), dtype=kael.float64, device=device, requires_grad=True)
            for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = kael.scaled_dot_product_attention(*ours, is_causal=is_causal, scale=0.4)
    expected = torch_reference(*theirs, is_causal, scale=0.4)
    np.testing.assert_allclose(out.cpu().numpy(), expected.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    (out * kael.tensor(weights.tolist(), dtype=kael.float64, device=device)).sum().backward()
    (expected * torch.tensor(weights)).sum().backward()
    for mine, reference in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.cpu().numpy(), reference.grad.numpy(), rtol=1e-9,
                                   atol=1e-11)


def test_errors_are_typed():
    q = kael.randn(1, 2, 3, 4)
    with pytest.raises(ValueError, match="scaled_dot_product_attention"):
        kael.scaled_dot_product_attention(q, kael.randn(1, 2, 3, 5), q)
    with pytest.raises(TypeError, match="scaled_dot_product_attention"):
        kael.scaled_dot_product_attention(q, q.double(), q)

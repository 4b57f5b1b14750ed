"""The fused softmax family against torch, forward and backward, on every device: softmax and
log_softmax over each dim of a 3-d tensor (also through a transposed view), cross_entropy with
each reduction."""
import numpy as np
import pytest

import kael

torch = pytest.importorskip("torch")


def leaves(x, device):
    return (kael.tensor(x, device=device, requires_grad=True),
            torch.tensor(x, requires_grad=True))


def close(got, want, rtol):
    np.testing.assert_allclose(got.cpu().numpy(), want.detach().numpy(), rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_softmax_matches_torch(device, dtype, name, dim):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 4, 70)) * 4).astype(dtype)
    weight = rng.standard_normal((70, 4, 3)).astype(dtype)
    rtol = 1e-5 if dtype == "float32" else 1e-10
    ours, theirs = leaves(x, device)
    # Through a transposed view, so the op's contiguous copy is part of the graph.
    out = getattr(kael, name)(ours.permute(2, 1, 0), dim)
    expected = getattr(torch, name)(theirs.permute(2, 1, 0), dim)
    close(out, expected, rtol)
    (out * kael.tensor(weight, device=device)).sum().backward()
    (expected * torch.tensor(weight)).sum().backward()
    close(ours.grad, theirs.grad, rtol)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_cross_entropy_matches_torch(device, reduction):
    rng = np.random.default_rng(6)
    logits = (rng.standard_normal((6, 1001)) * 5).astype("float32")
    targets = rng.integers(0, 1001, 6)
    ours, theirs = leaves(logits, device)
    loss = kael.cross_entropy(ours, kael.tensor(targets, device=device), reduction=reduction)
    expected = torch.nn.functional.cross_entropy(theirs, torch.tensor(targets),
                                                 reduction=reduction)
    close(loss, expected, 1e-5)
    weight = rng.standard_normal(loss.shape).astype("float32")
    (loss * kael.tensor(weight, device=device)).sum().backward()
    (expected * torch.tensor(weight)).sum().backward()
    close(ours.grad, theirs.grad, 1e-5)


def test_infinite_rows_follow_torch(device):
    x = np.array([[-np.inf, -np.inf], [-np.inf, 0.0], [np.inf, 1.0], [1e30, 0.0]], "float32")
    for name in ["softmax", "log_softmax"]:
        got = getattr(kael, name)(kael.tensor(x, device=device), 1).cpu().numpy()
        want = getattr(torch, name)(torch.tensor(x), 1).numpy()
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-6)

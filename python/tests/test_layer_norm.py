"""layer_norm forward and backward against torch (when installed) on every device, with each
subset of x, weight and bias requiring grad, in f32 and f64."""
import numpy as np
import pytest

import kael

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("columns", [7, 64, 768])
@pytest.mark.parametrize("wanted", [(True, True, True), (True, False, False),
                                    (False, True, True), (False, False, True)])
def test_layer_norm_matches_torch(device, dtype, columns, wanted):
    rng = np.random.default_rng(columns)
    np_dtype = np.float32 if dtype == "f32" else np.float64
    x, grad = (rng.standard_normal((2, 3, columns)).astype(np_dtype) * 3 for _ in range(2))
    w, b = (rng.standard_normal(columns).astype(np_dtype) for _ in range(2))

    def leaves(lib, to):
        return [to(lib, value).requires_grad_(want) for value, want in zip((x, w, b), wanted)]

    tx, tw, tb = leaves(torch, lambda lib, a: lib.tensor(a))
    expected = torch.nn.functional.layer_norm(tx, (columns,), tw, tb, 1e-5)
    expected.backward(torch.tensor(grad))
    kx, kw, kb = leaves(kael, lambda lib, a: lib.tensor(a).to(device))
    out = kael.layer_norm(kx, kw, kb, 1e-5)
    out.backward(kael.tensor(grad).to(device))
    rtol, atol = (1e-4, 1e-4) if dtype == "f32" else (1e-10, 1e-10)
    np.testing.assert_allclose(out.cpu().numpy(), expected.detach().numpy(), rtol, atol)
    for got, want, needed in zip((kx, kw, kb), (tx, tw, tb), wanted):
        assert (got.grad is not None) == needed
        if needed:
            np.testing.assert_allclose(got.grad.cpu().numpy(), want.grad.numpy(), rtol, atol)

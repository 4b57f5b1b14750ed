"""BatchNorm's training step and var/std over the dims around one kept run, the two callers of
the plugins' per-channel kernels (KAEL_EXTENSION_CHANNELS), against torch 1.13 on every device
kael lists: float32 and bfloat16 on contiguous, channels-last and strided inputs, the running
statistics, every gradient, and double backward (which differentiates the composed form)."""
import numpy as np
import pytest

import kael
import kael.nn.functional as KF

torch = pytest.importorskip("torch")

LAYOUTS = ["contiguous", "channels_last", "strided"]


def laid_out(lib, values, layout, device):
    """values ([N, C, *S]) as a lib tensor read through the layout."""
    if layout == "channels_last":
        moved = np.ascontiguousarray(np.moveaxis(values, 1, -1))
        t = lib.tensor(moved).to(device)
        return t.permute(0, t.dim() - 1, *range(1, t.dim() - 1))
    if layout == "strided":
        doubled = np.repeat(values, 2, axis=-1)
        return lib.tensor(np.ascontiguousarray(doubled)).to(device)[..., ::2]
    return lib.tensor(values).to(device)


def as_array(t):
    return np.asarray(t.detach().float().cpu().tolist(), dtype=np.float64)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(6, 3, 5, 7), (16, 4), (4, 5, 9), (2, 3, 2, 3, 2)])
def test_batch_norm_training_matches_torch(device, layout, shape):
    rng = np.random.default_rng(1)
    values = (rng.standard_normal(shape) * 2 + 5).astype("float32")
    upstream = rng.standard_normal(shape).astype("float32")
    channels = shape[1]
    weight = rng.uniform(0.5, 1.5, channels).astype("float32")
    bias = rng.uniform(-0.5, 0.5, channels).astype("float32")
    results = []
    for lib, dev in ((kael, device), (torch, "cpu")):
        x = laid_out(lib, values, layout, dev).detach().requires_grad_(True)
        w = lib.tensor(weight).to(dev).requires_grad_(True)
        b = lib.tensor(bias).to(dev).requires_grad_(True)
        running_mean = lib.zeros(channels).to(dev)
        running_var = lib.ones(channels).to(dev)
        y = lib.nn.functional.batch_norm(x, running_mean, running_var, w, b, True, 0.2, 1e-5)
        y.backward(lib.tensor(upstream).to(dev))
        results.append([as_array(t) for t in (y, x.grad, w.grad, b.grad, running_mean,
                                              running_var)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_batch_norm_bfloat16_matches_torch_within_its_precision(device):
    rng = np.random.default_rng(2)
    values = rng.standard_normal((8, 4, 6, 6)).astype("float32")
    results = []
    for lib, dev in ((kael, device), (torch, "cpu")):
        x = lib.tensor(values).to(dev).to(lib.bfloat16).requires_grad_(True)
        layer = lib.nn.BatchNorm2d(4).to(dev).to(lib.bfloat16)
        y = layer(x)
        (y.float() * lib.arange(y.numel()).reshape(y.shape).to(dev).float().sin()).sum().backward()
        results.append([as_array(t) for t in (y, x.grad, layer.weight.grad, layer.bias.grad,
                                              layer.running_mean, layer.running_var)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=3e-2, atol=3e-2)


def check_gradient_penalty(device, shape, seed, loss):
    """The gradients of x, w and b (x [N, C, *], w and b [C], float64) of a gradient penalty,
    the squared gradient of loss(lib, x, w, b) by x, equal torch's: the fused norms'
    backward differentiates their composed forms."""
    results = []
    for lib, dev in ((kael, device), (torch, "cpu")):
        gen = np.random.default_rng(seed)
        x = lib.tensor(gen.standard_normal(shape).astype("float64")).to(dev)
        w = lib.tensor(gen.uniform(0.5, 1.5, shape[1])).to(dev)
        b = lib.tensor(gen.standard_normal(shape[1])).to(dev)
        for t in (x, w, b):
            t.requires_grad_(True)
        (gx,) = lib.autograd.grad(loss(lib, x, w, b), [x], create_graph=True)
        (gx ** 2).sum().backward()
        results.append([as_array(t.grad) for t in (x, w, b)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)


def test_batch_norm_double_backward_matches_torch(device):
    check_gradient_penalty(device, (4, 3, 5), 3, lambda lib, x, w, b: (
        lib.nn.functional.batch_norm(x, None, None, w, b, True, 0.1, 1e-5) ** 3).sum())


def test_batch_norm_gradcheck(device):
    x = kael.randn(3, 2, 4, dtype=kael.float64).to(device).requires_grad_(True)
    w = kael.randn(2, dtype=kael.float64).to(device).requires_grad_(True)
    b = kael.randn(2, dtype=kael.float64).to(device).requires_grad_(True)
    assert kael.autograd.gradcheck(
        lambda a, c, d: KF.batch_norm(a, None, None, c, d, True, 0.1, 1e-5), (x, w, b))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_var_and_std_around_one_kept_run_match_torch(device, layout, dtype):
    rng = np.random.default_rng(4)
    values = (rng.standard_normal((6, 5, 9)) * 0.01 + 100).astype("float32")
    tol = 1e-5 if dtype == "float32" else 2e-2
    for correction in (0, 1, 60):
        got_x = laid_out(kael, values, layout, device).to(getattr(kael, dtype))
        want_x = laid_out(torch, values, layout, "cpu").to(getattr(torch, dtype))
        for name in ("var", "std"):
            for keepdim in (False, True):
                got = getattr(kael, name)(got_x, dim=(0, 2), correction=correction,
                                          keepdim=keepdim)
                biased = torch.var(want_x.double(), dim=(0, 2), unbiased=False, keepdim=keepdim)
                count = 6 * 9
                scale = count / (count - correction) if count > correction else np.inf
                want = biased * scale if name == "var" else (biased * scale) ** 0.5
                assert got.dtype == getattr(kael, dtype) and tuple(got.shape) == tuple(want.shape)
                np.testing.assert_allclose(as_array(got), want.numpy(), rtol=tol)


def test_group_norm_and_eval_batch_norm_double_backward_match_torch(device):
    """The per-channel scale and shift differentiates its backward through the composed form."""
    def loss(lib, x, w, b):
        mean = lib.zeros(4, dtype=lib.float64).to(x.device)
        var = lib.ones(4, dtype=lib.float64).to(x.device)
        return (lib.nn.functional.group_norm(x, 2, w, b) ** 3).sum() + \
            (lib.nn.functional.batch_norm(x, mean, var, w, b, False, 0.1, 1e-5) ** 3).sum()
    check_gradient_penalty(device, (3, 4, 5), 5, loss)

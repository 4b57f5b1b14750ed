"""bf16/f16 reductions beyond sum, prod, amax and amin: argmax/argmin, max/min with indices,
var/std, norm, logsumexp, cumsum/cumprod, over every dim of contiguous and transposed tensors
with NaNs in some runs. The reference is torch's float32 result rounded once to the dtype
(indices exactly). On the cuda plugin these run natively (reduce.cu, reduce_dims.cu, scan.cu);
elsewhere over f32 twins, which must give the same answers."""
import numpy as np
import pytest
import torch

import kael

LOW = [(kael.bfloat16, torch.bfloat16), (kael.float16, torch.float16)]


def as_array(t):
    return np.array(t.float().tolist(), dtype=np.float64)


def assert_within_one_step(got, want, dtype):
    """Equal, or one step of the dtype apart (f32 against double accumulation may straddle a
    rounding boundary); NaN where the reference has NaN."""
    g, w = as_array(got), want.double().numpy()
    step = 2.0 ** -7 if dtype == kael.bfloat16 else 2.0 ** -10
    close = np.isclose(g, w, rtol=step, atol=step * 1e-3) | (np.isnan(g) & np.isnan(w)) | (g == w)
    assert close.all(), (g[~close][:5], w[~close][:5])


def operands(kael_dtype, torch_dtype, device, transposed, nan=True):
    data = np.random.default_rng(11).uniform(0.5, 1.5, (3, 70, 83)).astype(np.float32)
    if nan:
        data[1, 5, 17] = data[2, 69, 80] = data[0, 0, 3] = np.nan
    source = torch.tensor(data).to(torch_dtype)
    x = kael.tensor(data, device=device).to(kael_dtype)
    if transposed:
        return x.transpose(0, 2), source.float().transpose(0, 2)
    return x, source.float()


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_arg_extremes_and_max_min_with_indices(kael_dtype, torch_dtype, transposed, device):
    x, reference = operands(kael_dtype, torch_dtype, device, transposed)
    for dim in (0, 1, 2):
        for op in ("argmax", "argmin"):
            got = getattr(kael, op)(x, dim=dim)
            assert got.tolist() == getattr(torch, op)(reference, dim=dim).tolist(), (op, dim)
        for op in ("max", "min"):
            values, indices = getattr(kael, op)(x, dim=dim)
            want_values, want_indices = getattr(torch, op)(reference, dim=dim)
            assert values.dtype == kael_dtype
            assert indices.tolist() == want_indices.tolist(), (op, dim)
            assert np.array_equal(as_array(values), want_values.double().numpy(), equal_nan=True)
    assert kael.argmax(x).item() == torch.argmax(reference).item()


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_var_std_norm_logsumexp(kael_dtype, torch_dtype, transposed, device):
    x, reference = operands(kael_dtype, torch_dtype, device, transposed)
    for dim in (0, 1, 2, (0, 2), None):
        dims = dim if dim is not None else (0, 1, 2)
        for op in ("var", "std"):
            for correction in (0, 1):
                got = getattr(x, op)(dim=dims, correction=correction)
                want = getattr(reference, op)(dim=dims, correction=correction)
                assert got.dtype == kael_dtype
                assert_within_one_step(got, want.to(torch_dtype).float(), kael_dtype)
        got = x.norm(dim=dims)
        assert got.dtype == kael_dtype
        want = torch.linalg.vector_norm(reference, dim=dims).to(torch_dtype).float()
        assert_within_one_step(got, want, kael_dtype)
        got = kael.logsumexp(x, dim=dims)
        want = torch.logsumexp(reference, dim=dims).to(torch_dtype).float()
        assert_within_one_step(got, want, kael_dtype)


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_cumsum_and_cumprod(kael_dtype, torch_dtype, transposed, device):
    x, reference = operands(kael_dtype, torch_dtype, device, transposed)
    for dim in (0, 1, 2):
        for op in ("cumsum", "cumprod"):
            got = getattr(kael, op)(x, dim)
            assert got.dtype == kael_dtype and got.shape == tuple(reference.shape)
            want = getattr(torch, op)(reference.double(), dim).to(torch_dtype).float()
            assert_within_one_step(got, want, kael_dtype)


@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_long_single_row_scan_and_empty_runs(kael_dtype, torch_dtype, device):
    """One row of 2^15 (the long-row path, which the cuda plugin declines to an f32 twin) and
    empty tensors: the same rules as float32."""
    data = np.random.default_rng(12).uniform(-1, 1, 1 << 15).astype(np.float32)
    x = kael.tensor(data, device=device).to(kael_dtype)
    reference = torch.tensor(data).to(torch_dtype).double()
    assert_within_one_step(kael.cumsum(x, 0),
                           torch.cumsum(reference, 0).to(torch_dtype).float(), kael_dtype)
    empty = kael.zeros(0, 5, device=device).to(kael_dtype)
    assert kael.cumsum(empty, 0).shape == (0, 5)
    assert kael.argmax(empty, dim=1).shape == (0,)
    assert kael.var(empty, dim=1).shape == (0,)
    with pytest.raises(Exception):
        kael.max(empty, dim=0)


@pytest.mark.parametrize("kael_dtype,torch_dtype", [(kael.float32, torch.float32),
                                                    (kael.float64, torch.float64)])
def test_variance_around_a_kept_dim_keeps_nan(kael_dtype, torch_dtype, device):
    """var/std over (0, 2) of [N, C, L] read by the per-channel moments: a NaN in a channel
    makes its variance NaN (the finisher's clamp of rounding below zero had made it 0)."""
    data = np.random.default_rng(13).uniform(0.5, 1.5, (3, 7, 9))
    data[1, 2, 4] = np.nan
    x = kael.tensor(data, device=device).to(kael_dtype)
    reference = torch.tensor(data).to(torch_dtype)
    for op in ("var", "std"):
        got = np.array(getattr(x, op)(dim=(0, 2)).tolist())
        want = getattr(reference, op)(dim=(0, 2)).numpy()
        assert np.allclose(got, want, rtol=1e-5, equal_nan=True), op
        assert np.isnan(got[2]) and not np.isnan(np.delete(got, 2)).any()


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("kael_dtype,torch_dtype", LOW)
def test_reductions_over_separate_runs_are_rounded_once(kael_dtype, torch_dtype, transposed,
                                                        device):
    """Over dims (0, 2) a first pass keeps f32 partials and the last pass rounds them (ABI 1.20's
    last pass for sums, norms and logsumexps, or a convert for a plugin without it or a mean). Integer elements make every f32 sum exact,
    so the result must be that sum rounded once, to the bit."""
    data = np.random.default_rng(14).integers(0, 4, (3, 70, 83)).astype(np.float32)
    x = kael.tensor(data, device=device).to(kael_dtype)
    reference = torch.tensor(data, dtype=torch.float64)
    if transposed:
        x, reference = x.transpose(0, 2), reference.transpose(0, 2)
    got = x.sum(dim=(0, 2))
    assert got.dtype == kael_dtype and got.device == x.device
    want = reference.sum(dim=(0, 2)).to(torch_dtype).float()
    assert np.array_equal(as_array(got), want.double().numpy())
    scaled = x * (1 / 128) + 1  # exact in both dtypes
    wide = reference * (1 / 128) + 1
    for op, want in (("mean", wide.mean(dim=(0, 2))),
                     ("norm", torch.linalg.vector_norm(wide, dim=(0, 2))),
                     ("logsumexp", torch.logsumexp(wide, dim=(0, 2)))):
        got = kael.logsumexp(scaled, dim=(0, 2)) if op == "logsumexp" else \
            getattr(scaled, op)(dim=(0, 2))
        assert got.dtype == kael_dtype, op
        assert_within_one_step(got, want.to(torch_dtype).float(), kael_dtype)

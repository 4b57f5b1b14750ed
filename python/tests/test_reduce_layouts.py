"""Reductions over dims of transposed and permuted tensors (read where they lie, no copy)
agree with numpy on every device."""
import numpy as np
import pytest

import kael


def _views(values, device):
    base = kael.tensor(values, device=device)
    return [("transposed", base.permute(2, 1, 0), values.transpose(2, 1, 0)),
            ("permuted", base.permute(1, 2, 0), values.transpose(1, 2, 0))]


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions_of_permuted_tensors_match_numpy(device, dim, keepdim):
    values = np.random.default_rng(3).integers(-9, 9, size=(3, 4, 5)).astype(np.float64)
    values[1, 2, 3] = np.nan
    for name, view, expected in _views(values, device):
        np.testing.assert_array_equal(view.sum(dim=dim, keepdim=keepdim).numpy(),
                                      expected.sum(axis=dim, keepdims=keepdim), err_msg=name)
        np.testing.assert_array_equal(view.max(dim=dim, keepdim=keepdim).values.numpy(),
                                      expected.max(axis=dim, keepdims=keepdim), err_msg=name)
        np.testing.assert_array_equal(view.argmax(dim=dim).numpy(),
                                      np.argmax(expected, axis=dim), err_msg=name)
    # Ties (small integers) keep the first occurrence, as numpy does.
    finite = np.nan_to_num(values, nan=0.0)
    for name, view, expected in _views(finite, device):
        np.testing.assert_array_equal(view.argmin(dim=dim).numpy(),
                                      np.argmin(expected, axis=dim), err_msg=name)

def test_sum_over_several_dims_of_a_permuted_tensor(device):
    values = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    for name, view, expected in _views(values, device):
        for dims in [(0, 1), (0, 2), (2, 0), (0, 1, 2)]:
            np.testing.assert_array_equal(view.sum(dim=dims).numpy(),
                                          expected.sum(axis=dims), err_msg=name)
            np.testing.assert_allclose(view.mean(dim=dims, keepdim=True).numpy(),
                                       expected.mean(axis=dims, keepdims=True), err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_scans_along_every_dim_of_every_layout_match_numpy(device, dtype):
    """cumsum and cumprod along each dim, of contiguous and permuted tensors, of rows longer
    than one column tile (300), with empty and 0-d inputs: the scan slot where a plugin has
    it, the moved-last rows elsewhere; the results are in the input's shape."""
    rng = np.random.default_rng(5)
    for shape in [(3, 4, 5), (2, 300, 3), (0, 3), ()]:
        values = (rng.integers(-2, 3, size=shape) if dtype != "bool" else
                  rng.integers(0, 2, size=shape)).astype(dtype)
        if dtype.startswith("float"):
            values = 1 + values / 64  # products stay near one
        base = kael.tensor(values, device=device)
        views = [("contiguous", base, values)]
        if len(shape) == 3:
            views += _views(values, device)
        for name, view, expected in views:
            for dim in range(-max(len(shape), 1), max(len(shape), 1)):
                wide = expected.astype(np.int64) if dtype in ("int64", "bool") else expected
                axis = dim if len(shape) else None
                np.testing.assert_allclose(kael.cumsum(view, dim).numpy(),
                                           np.cumsum(wide, axis=axis).reshape(expected.shape),
                                           rtol=1e-12, err_msg=f"{name} {shape} cumsum {dim}")
                np.testing.assert_allclose(kael.cumprod(view, dim).numpy(),
                                           np.cumprod(wide, axis=axis).reshape(expected.shape),
                                           rtol=1e-5, err_msg=f"{name} {shape} cumprod {dim}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_var_and_std_over_separate_runs_of_memory_match_numpy(device, dtype):
    """var and std over dims that are not adjacent in memory (float64: each group's variance
    and mean, then the law of total variance, with no copy) and over adjacent ones that are not
    innermost (one pass where they lie), of contiguous and permuted tensors, every correction,
    keepdim: numpy's float64 answer. A large offset beside a small spread is where a variance
    from raw sums of squares, or from group means rounded to float32, loses its digits."""
    rng = np.random.default_rng(11)
    values = (1000 + rng.standard_normal((4, 5, 6)) / 100).astype(dtype)
    base = kael.tensor(values, device=device)
    views = [("contiguous", base, values)] + _views(values, device)
    rtol = 1e-4 if dtype == "float32" else 1e-10
    for name, view, expected in views:
        for dims in [(0, 2), (2, 0), (0, 1), (1, 2), (0, 1, 2)]:
            wide = expected.astype(np.float64)
            for correction in (0, 1, 2):
                for keepdim in (False, True):
                    want = wide.var(axis=dims, ddof=correction, keepdims=keepdim)
                    got = view.var(dim=dims, correction=correction, keepdim=keepdim)
                    assert got.dtype == view.dtype
                    message = f"{name} {dims} correction {correction} keepdim {keepdim}"
                    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, err_msg=message)
                    np.testing.assert_allclose(
                        view.std(dim=dims, correction=correction, keepdim=keepdim).numpy(),
                        np.sqrt(want), rtol=rtol, err_msg=message)
    # Fewer elements than the correction: inf for a spread, NaN for a constant.
    spread = kael.tensor(values[:2, :, :3], device=device)
    assert np.isinf(spread.var(dim=(0, 2), correction=6).numpy()).all()
    constant = kael.ones(2, 3, 2, dtype=getattr(kael, dtype), device=device)
    assert np.isnan(constant.var(dim=(0, 2), correction=5).numpy()).all()

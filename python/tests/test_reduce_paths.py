"""Reductions and scans at the shapes that pick each kernel path of a device (on the cuda
plugin: a thread, a warp or a block per row; long rows cut into chunks whose last block merges
them; columns split over blocks; max/min with indices in one pass; scans of columns, of rows
and of a few long rows), against numpy, in every dtype the op takes."""
import numpy as np
import pytest

import kael

# (shape, dim): rows of 5 (a thread each), of 700 (a warp each), 3 rows of 50000 and one of
# 2^20 (chunks of a block, merged by the last one), 40 rows of 9000 (on the cpu plugin, a few
# blocks' partials kept on the stack per row, rows shared by the threads), and columns of 40 and
# 300 down 3000 rows (a tile too few to fill the GPU: split, merged by the last block), 600x500
# over dim 0.
SHAPES = [((2000, 5), 1), ((300, 700), 1), ((3, 50000), 1), ((40, 9000), 1),
          ((1 << 20,), 0), ((1, 3000, 40), 1), ((2, 3000, 300), 1), ((600, 500), 0)]


def _values(shape, dtype, rng):
    if dtype == "bool":
        return rng.random(shape) < 0.999  # mostly True, so all() needs every element
    if dtype == "int64":
        return rng.integers(-50, 50, size=shape)
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_reductions_of_every_path_match_numpy(device, shape, dim, dtype):
    rng = np.random.default_rng(11)
    values = _values(shape, dtype, rng)
    x = kael.tensor(values, device=device)
    wide = values.astype(np.float64)
    tolerance = {"rtol": 1e-4, "atol": 1e-3} if dtype == "float32" else {"rtol": 1e-9}
    np.testing.assert_allclose(x.sum(dim=dim).numpy(), wide.sum(axis=dim), **tolerance)
    np.testing.assert_array_equal(x.amax(dim=dim).numpy(), values.max(axis=dim))
    np.testing.assert_array_equal(x.amin(dim=dim).numpy(), values.min(axis=dim))
    np.testing.assert_array_equal(x.argmax(dim=dim).numpy(), values.argmax(axis=dim))
    if dtype != "int64":
        np.testing.assert_allclose(x.var(dim=dim).numpy(), wide.var(axis=dim, ddof=1),
                                   **tolerance)
        np.testing.assert_allclose(x.norm(dim=dim).numpy(),
                                   np.sqrt((wide * wide).sum(axis=dim)), **tolerance)
    np.testing.assert_allclose(x.sum().item(), wide.sum(), **tolerance)


@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_max_and_min_with_indices_of_every_path_match_numpy(device, shape, dim, dtype):
    """Values and indices from one pass where the plugin has reduce_indexed: ties (small
    integers, bools) keep the first index, as numpy and PyTorch do."""
    rng = np.random.default_rng(12)
    values = (rng.integers(-3, 4, size=shape).astype(dtype) if dtype != "bool"
              else rng.random(shape) < 0.5)
    x = kael.tensor(values, device=device)
    for result, reduce, arg in ((x.max(dim=dim), np.max, np.argmax),
                                (x.min(dim=dim), np.min, np.argmin)):
        np.testing.assert_array_equal(result.values.numpy(), reduce(values, axis=dim))
        np.testing.assert_array_equal(result.indices.numpy(), arg(values, axis=dim))
    kept = x.max(dim=dim, keepdim=True)
    np.testing.assert_array_equal(kept.indices.numpy(),
                                  np.expand_dims(values.argmax(axis=dim), dim))


def test_max_with_indices_of_transposed_tensors_and_nans(device):
    rng = np.random.default_rng(13)
    values = rng.standard_normal((64, 3000)).astype(np.float32)
    values[5, 17] = np.nan
    values[9, 2000] = np.nan
    values[9, 2500] = np.nan
    x = kael.tensor(values, device=device)
    for view, expected in ((x, values), (x.t(), values.T)):
        for dim in (0, 1):
            result = view.max(dim=dim)
            reference = np.max(expected, axis=dim)
            np.testing.assert_array_equal(result.values.numpy(), reference)
            # numpy's argmax also returns the first NaN.
            np.testing.assert_array_equal(result.indices.numpy(),
                                          np.argmax(expected, axis=dim))


def test_max_with_indices_records_the_gradient_of_the_values(device):
    x = kael.tensor([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]], device=device, requires_grad=True)
    values, indices = x.max(dim=1)
    values.sum().backward()
    np.testing.assert_array_equal(indices.numpy(), [1, 0])
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [1, 0, 0]])


@pytest.mark.parametrize("shape,dim", [((3, 300, 70), 1), ((700, 33), 0), ((40, 333), 1),
                                       ((2, 20000), 1), ((70000,), 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_scans_of_every_path_match_numpy(device, shape, dim, dtype):
    """Columns (a thread each), rows over several warp tiles, and a few long rows (CUB for
    floats, the cumsum slot's units for other sums)."""
    rng = np.random.default_rng(14)
    values = (rng.integers(-2, 3, size=shape) if dtype != "bool"
              else rng.integers(0, 2, size=shape)).astype(dtype)
    if dtype.startswith("float"):
        values = 1 + values / 4096  # products stay near one over 70000 elements
    x = kael.tensor(values, device=device)
    wide = values.astype(np.int64) if dtype in ("int64", "bool") else values.astype(np.float64)
    # float32 products composed without a scan slot (the emulated plugin) round each step.
    tolerance = {"rtol": 1e-3} if dtype == "float32" else {"rtol": 1e-10}
    np.testing.assert_allclose(kael.cumsum(x, dim=dim).numpy(), np.cumsum(wide, axis=dim),
                               **tolerance)
    if dtype in ("int64", "bool"):
        small = np.clip(wide, -1, 1)  # products of a long row of integers stay in range
        np.testing.assert_array_equal(kael.cumprod(kael.tensor(small, device=device),
                                                   dim=dim).numpy(),
                                      np.cumprod(small, axis=dim))
    else:
        np.testing.assert_allclose(kael.cumprod(x, dim=dim).numpy(),
                                   np.cumprod(wide, axis=dim), **tolerance)


def _logsumexp(wide, axis):
    top = np.max(wide, axis=axis, keepdims=True)
    shift = np.where(np.isinf(top), 0.0, top)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.squeeze(np.log(np.exp(wide - shift).sum(axis=axis, keepdims=True)) + shift,
                          axis=axis)


@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_finished_reductions_of_every_path_match_numpy(device, shape, dim, dtype):
    """mean, var, std (reduce_dims_finished: the result scaled, or its root, in the
    reduction's own store) and logsumexp (its one-pass reduce op), on every path, with -inf, +inf
    and NaN placed in some rows and columns."""
    rng = np.random.default_rng(12)
    values = _values(shape, dtype, rng)
    flat = values.reshape(-1)
    flat[::977] = -np.inf
    flat[5::1511] = np.inf
    flat[7::2003] = np.nan
    x = kael.tensor(values, device=device)
    wide = values.astype(np.float64)
    tolerance = {"rtol": 1e-4, "atol": 1e-4} if dtype == "float32" else {"rtol": 1e-9}
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(x.mean(dim=dim).numpy(), wide.mean(axis=dim), **tolerance)
        np.testing.assert_allclose(x.std(dim=dim).numpy(), wide.std(axis=dim, ddof=1),
                                   **tolerance)
        np.testing.assert_allclose(x.var(dim=dim, correction=0).numpy(), wide.var(axis=dim),
                                   **tolerance)
    np.testing.assert_allclose(kael.logsumexp(x, dim).numpy(), _logsumexp(wide, dim),
                               **tolerance)
    finite = kael.tensor(rng.standard_normal(shape).astype(dtype), device=device)
    np.testing.assert_allclose(kael.logsumexp(finite, tuple(range(len(shape)))).item(),
                               _logsumexp(finite.numpy().astype(np.float64).reshape(-1), 0),
                               **tolerance)
    np.testing.assert_allclose(finite.mean().item(), finite.numpy().astype(np.float64).mean(),
                               **tolerance)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_finished_reductions_of_empty_and_special_rows(device, dtype):
    """Empty rows: mean and var NaN, logsumexp -inf; rows of all -inf give -inf, two +inf +inf
    (no inf - inf), a NaN NaN; the gradient of logsumexp is softmax."""
    empty = kael.zeros((3, 0), dtype=getattr(kael, dtype), device=device)
    assert np.isnan(empty.mean(dim=1).numpy()).all()
    assert np.isnan(empty.var(dim=1).numpy()).all()
    assert (kael.logsumexp(empty, 1).numpy() == -np.inf).all()
    rows = np.array([[-np.inf, -np.inf, -np.inf], [np.inf, 1.0, np.inf], [np.nan, 0.0, 1.0],
                     [0.0, 0.0, 0.0]], dtype=dtype)
    got = kael.logsumexp(kael.tensor(rows, device=device), 1).numpy()
    np.testing.assert_allclose(got, [-np.inf, np.inf, np.nan, np.log(3.0)], rtol=1e-6)
    x = kael.tensor(np.random.default_rng(3).standard_normal((4, 7)).astype(dtype),
                    device=device, requires_grad=True)
    kael.logsumexp(x, 1).sum().backward()
    values = x.detach().numpy().astype(np.float64)
    softmax = np.exp(values - values.max(1, keepdims=True))
    softmax /= softmax.sum(1, keepdims=True)
    np.testing.assert_allclose(x.grad.numpy(), softmax, rtol=1e-5)
    assert x.grad.device == x.device

"""Bugs the op fuzzer (tests/fuzz/fuzz_ops.py) found, each as the smallest case that shows it."""
import numpy as np
import pytest

import kael


@pytest.mark.parametrize("numpy_dtype", [np.float32, np.float64, np.int64, np.bool_])
def test_zero_dimensional_numpy_array_stays_zero_dimensional(device, numpy_dtype):
    source = np.array(1, dtype=numpy_dtype)
    t = kael.tensor(source, device=device)
    assert t.shape == () and t.dim() == 0
    np.testing.assert_array_equal(t.numpy(), source)
    assert t.numpy().shape == ()


def test_index_select_of_a_scalar_takes_exactly_one_index(device):
    scalar = kael.tensor(7.0, device=device)
    picked = kael.index_select(scalar, 0, kael.tensor([0], device=device))
    assert picked.shape == () and picked.item() == 7.0
    for count in (0, 2):  # was a 1-d result of that length, unlike the one-index case
        with pytest.raises(IndexError, match="index_select"):
            kael.index_select(scalar, 0, kael.zeros(count, dtype=kael.int64, device=device))


def test_index_select_checks_indices_when_the_result_is_empty(device):
    empty_rows = kael.zeros(0, 0, device=device)  # the result [1, 0] has no elements
    # A GPU reports a bad index at its next synchronisation, as CUDA's device-side errors.
    with pytest.raises(IndexError, match="index_select"):
        kael.index_select(empty_rows, 0, kael.tensor([0], device=device))
        kael.synchronize(device)
    with pytest.raises(IndexError, match="index_select"):
        kael.index_select(kael.zeros(2, 0, device=device), 0, kael.tensor([5], device=device))
        kael.synchronize(device)
    assert kael.index_select(kael.zeros(2, 0, device=device), 0,
                             kael.tensor([1], device=device)).shape == (1, 0)


def test_float32_var_std_and_norm_do_not_overflow_in_their_squares(device):
    # The squares (1e60) overflow float32; the answers (about 1e30) do not.
    values = np.zeros(15, dtype=np.float32)
    values[-1] = 1e30
    t = kael.tensor(values, device=device)
    expected_std = np.std(values.astype(np.float64))
    assert t.std(correction=0).dtype == kael.float32
    np.testing.assert_allclose(t.std(correction=0).item(), expected_std, rtol=1e-6)
    wide = kael.tensor(values / np.float32(2e10), device=device)  # var 1.6e38, squares 2.5e39
    np.testing.assert_allclose(wide.var(correction=0).item(),
                               np.var(values.astype(np.float64) / 2e10), rtol=1e-6)
    np.testing.assert_allclose(kael.norm(t).item(), 1e30, rtol=1e-6)
    tiny = kael.tensor([3e-30, 4e-30], device=device)  # squares below float32's range
    np.testing.assert_allclose(kael.norm(tiny).item(), 5e-30, rtol=1e-6)

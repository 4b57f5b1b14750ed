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

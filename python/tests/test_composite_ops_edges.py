"""Disagreements with torch 1.13 the composite-op coverage found (empty, 0-d and integral
inputs), each checked on every device."""
import math

import numpy as np
import pytest
import torch

import kael


def same(got, want):
    got = got.cpu().numpy()
    want = want.numpy()
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype), (got, want)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), equal_nan=True)


def test_searchsorted_refuses_a_scalar_for_rows(device):
    rows = kael.zeros(3, 6, device=device)
    with pytest.raises(ValueError, match="searchsorted"):
        kael.searchsorted(rows, kael.tensor(1., device=device))


def test_unflatten_resolves_minus_one_against_the_dim(device):
    same(kael.zeros(0, 4, device=device).unflatten(-1, (2, -1)),
         torch.zeros(0, 4).unflatten(-1, (2, -1)))
    with pytest.raises(ValueError, match="unflatten"):
        kael.zeros(0, device=device).unflatten(0, (0, -1))


def test_vector_norm_negative_ord_over_non_empty_dims_of_an_empty_tensor(device):
    for ord in (-1, -math.inf):
        same(kael.linalg.vector_norm(kael.zeros(0, 4, device=device), ord=ord, dim=-1),
             torch.linalg.vector_norm(torch.zeros(0, 4), ord=ord, dim=-1))
        with pytest.raises(ValueError, match="vector_norm"):
            kael.linalg.vector_norm(kael.zeros(0, 4, device=device), ord=ord, dim=0)


def test_repeated_dims_of_a_0d_tensor_are_refused(device):
    s = kael.tensor(2., device=device)
    for name, call in [("amin", lambda: s.amin((0, -1))), ("amax", lambda: s.amax((0, 0))),
                       ("var", lambda: s.var((0, -1))), ("std", lambda: s.std((0, -1))),
                       ("vector_norm", lambda: kael.linalg.vector_norm(s, math.inf, (0, -1)))]:
        with pytest.raises(ValueError, match=name):
            call()


def test_unique_with_a_dim_refuses_a_0d_tensor(device):
    with pytest.raises(IndexError, match="unique"):
        kael.unique(kael.tensor(2., device=device), dim=0)


def test_max_min_with_a_dim_refuse_an_empty_dim_with_index_error(device):
    empty = kael.zeros(0, 4, device=device)
    with pytest.raises(IndexError, match="max"):
        empty.max(0)
    with pytest.raises(IndexError, match="min"):
        empty.min(0, keepdim=True)
    same(empty.max(1).values, torch.zeros(0, 4).max(1).values)


def test_einsum_keeps_empty_dims(device):
    for equation, shapes in [("ij,ij->i", [(0, 4), (0, 4)]),
                             ("bij,bjk->bik", [(0, 2, 3), (0, 3, 4)]),
                             ("...i,...i->...", [(0, 3), (1, 3)])]:
        got = kael.einsum(equation, *[kael.zeros(*s, device=device) for s in shapes])
        want = torch.einsum(equation, *[torch.zeros(*s) for s in shapes])
        same(got, want.to(torch.float32))


def test_integral_linspace_and_logspace_truncate_the_end_points(device):
    for start, end, steps in [(-3.5, 10, 7), (0.5, 10.7, 5), (-3.5, -10.2, 6)]:
        same(kael.linspace(start, end, steps, dtype=kael.int64, device=device),
             torch.linspace(start, end, steps, dtype=torch.int64))
    for base in (10, 2):
        same(kael.logspace(0.5, 3.3, 4, base=base, dtype=kael.int64, device=device),
             torch.logspace(0.5, 3.3, 4, base=base, dtype=torch.int64))


def test_max_and_min_without_dim_keep_every_dim_as_one(device):
    x = kael.tensor([[1.0, 5.0], [3.0, 2.0]], device=device)
    assert kael.max(x, dim=None, keepdim=True).shape == (1, 1)
    assert x.min(dim=None, keepdim=True).tolist() == [[1.0]]

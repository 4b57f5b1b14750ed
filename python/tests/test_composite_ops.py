"""Composite ops (kael/ops_shape.h, ops_reduce.h) against torch 1.13 on every device: shape, factories, selection,
reductions, einsum and in-place forms, with gradchecks of the differentiable ones."""
import math

import numpy as np
import pytest
import torch

import kael

gradcheck = kael.autograd.gradcheck


def k(array, device, dtype=None):
    return kael.tensor(np.asarray(array), dtype=dtype, device=device)


def close(got, want, atol=1e-6):
    got = got.cpu().numpy() if isinstance(got, kael.Tensor) else np.asarray(got)
    want = want.numpy() if isinstance(want, torch.Tensor) else np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), atol=atol,
                               equal_nan=True)


DATA = np.array([[3., -1., 2., 0.], [5., 5., -2., 7.], [0., 1., 1., -4.]])
LAYOUTS = {
    "contiguous": lambda x: x,
    "transposed": lambda x: x.T,
    "strided": lambda x: x[:, ::2],
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_shape_ops_match_torch(device, layout, dtype):
    base = DATA.astype(dtype)
    t = LAYOUTS[layout](torch.tensor(base))
    x = LAYOUTS[layout](kael.tensor(base, device=device))
    close(x.flip(0), t.flip(0))
    close(x.flip((0, 1)), t.flip((0, 1)))
    close(x.fliplr(), t.fliplr())
    close(x.roll(1), t.roll(1))
    close(x.roll((1, -3), (0, 1)), t.roll((1, -3), (0, 1)))
    close(x.repeat(2, 1, 3), t.repeat(2, 1, 3))
    close(x.tile((2,)), t.tile((2,)))
    close(x.repeat_interleave(2, dim=1), t.repeat_interleave(2, dim=1))
    close(x.repeat_interleave(2), t.repeat_interleave(2))
    reps = [1, 0, 2, 3][: t.shape[0]]
    close(x.repeat_interleave(kael.tensor(reps), dim=0),
          t.repeat_interleave(torch.tensor(reps), dim=0))
    for diagonal in (-1, 0, 2):
        close(x.tril(diagonal), t.tril(diagonal))
        close(x.triu(diagonal), t.triu(diagonal))
    close(x.narrow(1, 1, 1), t.narrow(1, 1, 1))
    close(x.movedim(0, 1), t.movedim(0, 1))
    close(x.flatten(), t.flatten())
    close(x.unsqueeze(0).flatten(1), t.unsqueeze(0).flatten(1))
    close(x.flatten().unflatten(0, (t.shape[0], -1)), t.flatten().unflatten(0, (t.shape[0], -1)))
    close(x.T, t.T)
    close(x.mT, t.mT)
    assert [p.tolist() for p in x.unbind(1)] == [p.tolist() for p in t.unbind(1)]
    close(x.expand_as(kael.zeros(2, *x.shape)), t.expand_as(torch.zeros(2, *t.shape)))


def test_shape_ops_on_3d_empty_and_0d(device):
    t = torch.arange(24.).reshape(2, 3, 4)
    x = kael.arange(24., device=device).reshape(2, 3, 4)
    close(x.T, t.permute(2, 1, 0))
    close(x.mT, t.mT)
    close(x.movedim((0, 1), (2, 0)), t.movedim((0, 1), (2, 0)))
    close(x.tril(), t.tril())
    assert x.unsqueeze(0).squeeze((0, 2)).shape == (2, 3, 4)
    e = kael.zeros(0, 3, device=device)
    assert e.flip(0).shape == (0, 3) and e.roll(1, 0).shape == (0, 3)
    assert e.repeat(2, 2).shape == (0, 6)
    s = kael.tensor(5., device=device)
    assert s.flatten().shape == (1,) and s.T.shape == ()
    with pytest.raises(ValueError, match="mT"):
        s.mT
    with pytest.raises(ValueError, match="repeat"):
        x.repeat(2, 2)


def test_factories_match_torch(device):
    close(kael.eye(3, device=device), torch.eye(3))
    close(kael.eye(2, 4, dtype=kael.int64, device=device), torch.eye(2, 4, dtype=torch.int64))
    for start, end, steps in [(0, 1, 5), (-3.5, 10, 7), (2, 2, 1), (0, 1, 0), (1, -1, 100)]:
        close(kael.linspace(start, end, steps, device=device),
              torch.linspace(start, end, steps), atol=1e-6)
    close(kael.linspace(0, 10, 5, dtype=kael.int64, device=device),
          torch.linspace(0, 10, 5, dtype=torch.int64))
    close(kael.logspace(0, 3, 4, device=device), torch.logspace(0, 3, 4), atol=1e-3)
    close(kael.logspace(0, 3, 4, base=2, device=device), torch.logspace(0, 3, 4, base=2))
    close(kael.arange(0, 1, 0.1, device=device), torch.arange(0, 1, 0.1))


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_nonzero_argwhere(device, dtype):
    base = (DATA != 0) if dtype == "bool" else DATA.astype(dtype)
    t, x = torch.tensor(base), kael.tensor(base, device=device)
    close(x.nonzero(), t.nonzero())
    close(kael.argwhere(x), torch.argwhere(t))
    for got, want in zip(x.nonzero(as_tuple=True), t.nonzero(as_tuple=True)):
        close(got, want)
    close(x.T.nonzero(), t.T.nonzero())
    close(kael.tensor(0., device=device).nonzero(), torch.tensor(0.).nonzero())
    close(kael.tensor(3., device=device).nonzero(), torch.tensor(3.).nonzero())


def test_unique_and_bincount(device):
    base = np.array([[3, 1, 3], [2, 1, 3], [3, 1, 3]])
    t, x = torch.tensor(base), kael.tensor(base, device=device)
    for inverse in (False, True):
        for counts in (False, True):
            want = torch.unique(t, return_inverse=inverse, return_counts=counts)
            got = kael.unique(x, return_inverse=inverse, return_counts=counts)
            for g, w in zip(got if isinstance(got, tuple) else (got,),
                            want if isinstance(want, tuple) else (want,)):
                close(g, w)
    for dim in (0, 1):
        want = torch.unique(t, dim=dim, return_inverse=True, return_counts=True)
        for g, w in zip(kael.unique(x, dim=dim, return_inverse=True, return_counts=True), want):
            close(g, w)
    seq = torch.tensor([1, 1, 2, 2, 2, 1, 3])
    for g, w in zip(kael.unique_consecutive(k(seq, device), return_inverse=True,
                                            return_counts=True),
                    torch.unique_consecutive(seq, return_inverse=True, return_counts=True)):
        close(g, w)
    close(kael.unique(kael.zeros(0, device=device)), torch.unique(torch.zeros(0)))
    v = torch.tensor([0, 4, 4, 1])
    close(kael.bincount(k(v, device)), torch.bincount(v))
    close(kael.bincount(k(v, device), minlength=7), torch.bincount(v, minlength=7))
    w = torch.tensor([0.5, 1., 2., 3.])
    close(kael.bincount(k(v, device), weights=k(w, device, kael.float32)), torch.bincount(v, w))
    close(kael.bincount(kael.zeros(0, dtype=kael.int64, device=device)),
          torch.bincount(torch.zeros(0, dtype=torch.int64)))
    with pytest.raises(ValueError, match="bincount"):
        kael.bincount(k([-1, 2], device))


def test_median_kthvalue_searchsorted(device):
    t = torch.tensor(DATA)
    x = kael.tensor(DATA, device=device)
    close(x.median(), t.median())
    for dim in (0, 1, -1):
        for keepdim in (False, True):
            got, want = x.median(dim, keepdim), t.median(dim, keepdim)
            close(got.values, want.values)
            close(got.indices, want.indices)
            got, want = x.kthvalue(2, dim, keepdim), t.kthvalue(2, dim, keepdim)
            close(got.values, want.values)
    values, indices = x.T.median(0)
    close(values, t.T.median(0).values)
    nan = torch.tensor([[1., float("nan"), 3.], [4., 2., 0.]])
    close(k(nan, device).median(1).values, nan.median(1).values)
    close(k(nan, device).median(1).indices, nan.median(1).indices)
    seq, q = torch.tensor([1., 3., 3., 5.]), torch.tensor([[0., 3.], [6., 4.]])
    for right in (False, True):
        close(kael.searchsorted(k(seq, device), k(q, device), right=right),
              torch.searchsorted(seq, q, right=right))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_reductions_match_torch(device, dtype):
    t = torch.tensor(DATA.astype(dtype))
    x = kael.tensor(DATA.astype(dtype), device=device)
    for dim in ((), 0, 1, (0, 1), (-1,)):
        for keepdim in (False, True):
            close(x.amax(dim, keepdim), t.amax(dim, keepdim))
            close(x.amin(dim, keepdim), t.amin(dim, keepdim))
    got, want = x.max(1), t.max(1)
    assert type(got).__name__ == "max" and got._fields == ("values", "indices")
    close(got.values, want.values)
    close(got.indices, want.indices)
    close(x.min(0, keepdim=True).indices, t.min(0, keepdim=True).indices)
    close(x.max(), t.max())
    close(kael.max(x, x.flip(0)), torch.max(t, t.flip(0)))
    close(x.aminmax().min, t.aminmax().min)
    close(x.aminmax(dim=1).max, t.aminmax(dim=1).max)
    close(x.cumprod(1), t.cumprod(1))
    close(x.T.cumprod(0), t.T.cumprod(0))
    if dtype != "int64":
        for p in (0, 1, 2, 3, 0.5, math.inf, -math.inf):
            for dim in (None, 0, (0, 1)):
                close(kael.linalg.vector_norm(x, ord=p, dim=dim),
                      torch.linalg.vector_norm(t, ord=p, dim=dim), atol=1e-4)
        close(x.norm(), t.norm(), atol=1e-5)
        close(x.norm(p=1, dim=1, keepdim=True), t.norm(p=1, dim=1, keepdim=True), atol=1e-5)
        close(x.var((0, 1)), t.var((0, 1)), atol=1e-5)
        close(x.std((0, 1), keepdim=True), t.std((0, 1), keepdim=True), atol=1e-5)
        close(x.var(1, correction=0), t.var(1, unbiased=False), atol=1e-5)


def test_einsum_matches_torch(device):
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((2, 3)), rng.standard_normal((3, 4)), rng.standard_normal(4)
    batch = rng.standard_normal((5, 2, 3))
    square = rng.standard_normal((3, 3))
    cases = [("ij,jk->ik", a, b), ("ij,jk,k->i", a, b, c), ("ij,jk", a, b), ("ij->ji", a),
             ("ij->", a), ("ii->i", square), ("ii", square), ("bij,jk->bik", batch, b),
             ("...ij,jk->...ik", batch, b), ("i,i->", c, c), ("i,j->ij", c, c),
             ("bij,bkj->bik", batch, batch), ("ij,ij->ij", a, a), ("...j->...", batch)]
    for equation, *operands in cases:
        got = kael.einsum(equation, *[kael.tensor(o, device=device) for o in operands])
        want = torch.einsum(equation, *[torch.tensor(o) for o in operands])
        close(got, want, atol=1e-10)
    close(kael.einsum("ij,jk->ik", [kael.tensor(a, device=device), kael.tensor(b, device=device)]),
          torch.einsum("ij,jk->ik", torch.tensor(a), torch.tensor(b)), atol=1e-10)
    with pytest.raises(ValueError, match="ij,jk->ik"):
        kael.einsum("ij,jk->ik", kael.tensor(a, device=device), kael.tensor(a, device=device))
    with pytest.raises(ValueError, match="einsum"):
        kael.einsum("ij->q", kael.tensor(a, device=device))


def test_in_place_forms_match_torch(device):
    def both(fn):
        t = torch.tensor(DATA)
        x = kael.tensor(DATA, device=device)
        out = fn(x, kael)
        assert out is x or out.data_ptr() == x.data_ptr()
        close(x, fn(t, torch))

    both(lambda x, m: x.add_(2, alpha=3))
    both(lambda x, m: x.sub_(x.flip(0), alpha=0.5))
    both(lambda x, m: x.mul_(x))
    both(lambda x, m: x.div_(4))
    both(lambda x, m: x.abs_().sqrt_().log_().exp_())
    both(lambda x, m: x.neg_().relu_().sigmoid_().tanh_())
    both(lambda x, m: x.pow_(2))
    both(lambda x, m: x.clamp_(-1, 2))
    both(lambda x, m: x.clamp_(min=0))
    both(lambda x, m: x.clamp_(max=m.tensor([[1.], [0.], [2.]], dtype=m.float64).to(x.device)))
    both(lambda x, m: x.index_add_(1, m.tensor([0, 0, 3]).to(x.device),
                                   m.ones(3, 3, dtype=m.float64).to(x.device), alpha=2))
    both(lambda x, m: x.index_fill_(0, m.tensor([2, 0]).to(x.device), -7))
    both(lambda x, m: x.scatter_(1, m.tensor([[3], [0], [1]]).to(x.device),
                                 m.tensor([[1.], [2.], [3.]], dtype=m.float64).to(x.device)))
    both(lambda x, m: x.scatter_(0, m.tensor([[2, 1, 0, 0]]).to(x.device), value=9.))
    both(lambda x, m: x.scatter_(0, m.tensor([[2, 2, 0, 0]]).to(x.device),
                                 m.ones(1, 4, dtype=m.float64).to(x.device), reduce="add"))
    both(lambda x, m: x.lerp_(m.ones(3, 4, dtype=m.float64).to(x.device), 0.75))
    both(lambda x, m: x.addcmul_(x.flip(1), x.flip(0), value=0.5))
    both(lambda x, m: x.addcdiv_(x.flip(1), x.abs() + 1, value=2))
    ints = kael.tensor([1, 2], device=device)
    with pytest.raises(TypeError, match="add_"):
        ints.add_(0.5)
    with pytest.raises(TypeError, match="exp_"):
        ints.exp_()
    leaf = kael.ones(2, device=device, requires_grad=True)
    with pytest.raises(ValueError, match="mul_"):
        leaf.mul_(2)


def test_gradients(device):
    def _leaf(data, device):
        x = kael.tensor(data, dtype=kael.float64, device=device)
        x.requires_grad = True
        return x

    x = _leaf(np.random.default_rng(1).standard_normal((3, 4)), device)
    w = _leaf(np.random.default_rng(2).standard_normal((4, 2)), device)
    assert gradcheck(lambda a: a.flip((0, 1)).roll(1, 1).repeat(2, 1).tril(1), [x])
    assert gradcheck(lambda a: a.repeat_interleave(kael.tensor([2, 0, 1]).to(device), dim=0), [x])
    assert gradcheck(lambda a: a.cumprod(1), [x])
    zeros_inside = _leaf(np.array([[1., 0., 2.], [0., 0., 3.], [-2., 1.5, 0.5]]), device)
    assert gradcheck(lambda a: a.cumprod(1), [zeros_inside])
    assert gradcheck(lambda a: a.amax((0, 1)) + a.amin(1).sum(), [x])
    assert gradcheck(lambda a, b: kael.einsum("ij,jk->ik", a, b), [x, w])
    assert gradcheck(lambda a: kael.einsum("ii->i", a[:, :3]), [x])
    for p in (1, 2, 3, math.inf):
        assert gradcheck(lambda a: kael.linalg.vector_norm(a, ord=p, dim=1), [x])
    assert gradcheck(lambda a: a.median(1).values + a.kthvalue(2, 1).values, [x])
    assert gradcheck(lambda a: a.var((0, 1)) + a.std((0, 1)), [x])
    assert gradcheck(lambda a: a.max(1).values, [x])
    assert gradcheck(lambda a, b: kael.lerp(a, b.T.repeat(2, 1)[:3], 0.3), [x, w])
    # Ties share amax's gradient evenly, as torch.
    ties = _leaf(np.array([2., 2., 1.]), device)
    ties.amax().backward()
    assert ties.grad.tolist() == [0.5, 0.5, 0.0]
    # The norm of zeros has a zero gradient, not NaN.
    z = _leaf(np.zeros(3), device)
    kael.linalg.vector_norm(z).backward()
    assert z.grad.tolist() == [0.0, 0.0, 0.0]
    # In-place forms on non-leaves carry gradients.
    y = x * 1
    y.mul_(x).add_(x, alpha=2).clamp_(max=1.0).exp_()
    y.sum().backward()
    t = torch.tensor(x.detach().cpu().numpy(), requires_grad=True)
    u = t * 1
    u.mul_(t).add_(t, alpha=2).clamp_(max=1.0).exp_()
    u.sum().backward()
    close(x.grad, t.grad, atol=1e-10)
    # A target that is its own operand (y *= y) keeps its old value for the gradient: 2x.
    x.grad = None
    y = x * 1
    y.mul_(y)
    y.sum().backward()
    close(x.grad, 2 * t.detach(), atol=1e-10)


def test_docstrings_give_signatures():
    import inspect
    assert str(inspect.signature(kael.flatten)) == "(input, start_dim=0, end_dim=-1)"
    assert str(inspect.signature(kael.eye)) == \
        "(n, m=None, *, dtype=None, device=None, requires_grad=False)"
    assert "Example" in kael.einsum.__doc__ and "Example" in kael.Tensor.add_.__doc__
    assert kael.return_types.max.__module__ == "kael.return_types"

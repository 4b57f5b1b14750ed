"""Gradchecks of every differentiable composite op (kael/ops.h) on every device, on f64
inputs read contiguous, transposed and strided (a slice with a step)."""
import math

import numpy as np
import pytest

import kael

gradcheck = kael.autograd.gradcheck

# Each builds a [3, 4] f64 view from a base leaf: the leaf is what gradcheck perturbs.
LAYOUTS = {
    "contiguous": ((3, 4), lambda t: t),
    "transposed": ((4, 3), lambda t: t.T),
    "strided": ((6, 9), lambda t: t[::2, 1::2]),
}


def leaf(shape, device, seed=0, positive=False):
    values = np.random.default_rng(seed).standard_normal(shape)
    if positive:
        values = np.abs(values) + 0.5
    x = kael.tensor(values, dtype=kael.float64, device=device)
    x.requires_grad = True
    return x


def check(device, layout, fn, seed=0, positive=False):
    """gradcheck of fn(view of a leaf) for one layout."""
    shape, view = LAYOUTS[layout]
    base = leaf(shape, device, seed, positive)
    assert gradcheck(lambda b: fn(view(b)), [base])


def ints(values, device):
    return kael.tensor(values, device=device)


SHAPE_OPS = {
    "narrow": lambda x: x.narrow(1, 1, 2),
    "movedim": lambda x: x.unsqueeze(0).movedim(0, -1),
    "flatten": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(1, (2, -1)),
    "T": lambda x: x.unsqueeze(0).T,
    "mT": lambda x: x.unsqueeze(0).mT,
    "squeeze_dims": lambda x: x.unsqueeze(0).unsqueeze(-1).squeeze((0, -1)),
    "unbind": lambda x: x.unbind(1)[2] * 2 + x.unbind(0)[0].sum(),
    "view_as": lambda x: x.contiguous().view_as(kael.zeros(12)),
    "reshape_as": lambda x: x.reshape_as(kael.zeros(2, 6)),
    "expand_as": lambda x: x[:1].expand_as(kael.zeros(3, 4)),
    "flip": lambda x: x.flip((0, 1)),
    "fliplr": lambda x: x.fliplr(),
    "flipud": lambda x: x.flipud(),
    "roll": lambda x: x.roll(5),
    "roll_dims": lambda x: x.roll((1, -3), (0, 1)),
    "repeat": lambda x: x.repeat(2, 1, 3),
    "tile": lambda x: x.tile((2,)),
    "repeat_interleave": lambda x: x.repeat_interleave(2, dim=1),
    "repeat_interleave_flat": lambda x: x.repeat_interleave(3),
    "tril": lambda x: x.tril(-1) + x.tril(2),
    "triu": lambda x: x.triu() + x.triu(1),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op", list(SHAPE_OPS))
def test_shape_ops_gradcheck(device, layout, op):
    check(device, layout, SHAPE_OPS[op])


def test_repeat_interleave_counts_gradcheck(device):
    for layout in LAYOUTS:
        check(device, layout,
              lambda x: x.repeat_interleave(ints([2, 0, 1], device), dim=0))


REDUCTIONS = {
    "median": lambda x: x.median(),
    "median_dim": lambda x: x.median(1).values + x.median(0, keepdim=True).values.sum(),
    "kthvalue": lambda x: x.kthvalue(2, 1).values + x.kthvalue(3, 0).values.sum(),
    "amax": lambda x: x.amax((0, 1)) + x.amax(1).sum(),
    "amin": lambda x: x.amin(0, keepdim=True),
    "aminmax": lambda x: x.aminmax(dim=1).min * x.aminmax().max,
    "max_dim": lambda x: x.max(1).values,
    "min_dim": lambda x: x.min(0, keepdim=True).values,
    "var_dims": lambda x: x.var((0, 1)) + x.var((1,), correction=0).sum(),
    "std_dims": lambda x: x.std((0, 1), keepdim=True),
    "norm": lambda x: x.norm() + x.norm(p=1, dim=1).sum(),
    "cumprod": lambda x: x.cumprod(1) + x.cumprod(0),
}
for _p in (0.5, 1, 2, 3, math.inf, -math.inf):
    REDUCTIONS[f"vector_norm_{_p}"] = (
        lambda p: lambda x: kael.linalg.vector_norm(x, ord=p, dim=1)
        + kael.linalg.vector_norm(x, ord=p))(_p)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op", list(REDUCTIONS))
def test_reductions_gradcheck(device, layout, op):
    # Normal values have no ties, so max/median/kthvalue pick one element each.
    check(device, layout, REDUCTIONS[op])


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_einsum_gradcheck(device, layout):
    shape, view = LAYOUTS[layout]
    a = leaf(shape, device, 1)
    w = leaf((4, 2), device, 2)
    batch = leaf((2, 3, 4), device, 3)
    assert gradcheck(lambda b, c: kael.einsum("ij,jk->ik", view(b), c), [a, w])
    assert gradcheck(lambda b: kael.einsum("ii->i", view(b)[:, :3]), [a])
    assert gradcheck(lambda b, c: kael.einsum("bij,ij->bi", c, view(b)), [a, batch])
    assert gradcheck(lambda b, c: kael.einsum("...ij,jk->...ik", c, view(b).T), [a, batch])
    assert gradcheck(lambda b: kael.einsum("ij->", view(b)), [a])


# In-place forms on a non-leaf copy: the gradient flows through the write to the leaf.
IN_PLACE = {
    "add_": lambda y, o: y.add_(o, alpha=2),
    "sub_": lambda y, o: y.sub_(o, alpha=0.5),
    "mul_": lambda y, o: y.mul_(o),
    "div_": lambda y, o: y.div_(o.abs() + 1),
    "pow_": lambda y, o: y.abs_().add_(0.5).pow_(o),
    "neg_": lambda y, o: y.neg_(),
    "abs_": lambda y, o: y.abs_(),
    "exp_": lambda y, o: y.exp_(),
    "log_": lambda y, o: y.abs_().add_(0.5).log_(),
    "sqrt_": lambda y, o: y.abs_().add_(0.5).sqrt_(),
    "sigmoid_": lambda y, o: y.sigmoid_(),
    "tanh_": lambda y, o: y.tanh_(),
    "relu_": lambda y, o: y.relu_(),
    "clamp_": lambda y, o: y.clamp_(-0.5, 0.8),
    "clamp_tensor": lambda y, o: y.clamp_(max=o),
    "lerp_": lambda y, o: y.lerp_(o, 0.3),
    "lerp_tensor": lambda y, o: y.lerp_(o, o.sigmoid()),
    "addcmul_": lambda y, o: y.addcmul_(o, o, value=0.5),
    "addcdiv_": lambda y, o: y.addcdiv_(o, o.abs() + 1, value=2),
}
# Every in-place form of the rows of kael/op_rows.h (classification has none), on positive
# inputs (log, sqrt, ...).
IN_PLACE.update({f"{name}_": lambda y, o, name=name: getattr(y.abs_().add_(0.5), name + "_")()
                 for family in ("float_math", "numeric", "rounding")
                 for name in kael._kael._op_rows()[family]})


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("op", list(IN_PLACE))
def test_in_place_gradcheck(device, layout, op):
    shape, view = LAYOUTS[layout]
    a = leaf(shape, device, 4)
    other = leaf((3, 4), device, 5)

    def fn(base, o):
        y = view(base) * 1
        return IN_PLACE[op](y, o)

    assert gradcheck(fn, [a, other])


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_index_and_scatter_in_place_gradcheck(device, layout):
    shape, view = LAYOUTS[layout]
    a = leaf(shape, device, 6)
    source = leaf((3, 2), device, 7)
    index = ints([3, 0], device)

    def index_add(base, s):
        return (view(base) * 1).index_add_(1, index, s, alpha=2)

    def index_fill(base):
        return (view(base) * 1).index_fill_(1, index, -7.)

    def scatter(base, s):
        return (view(base) * 1).scatter_(1, ints([[3, 1], [0, 2], [1, 0]], device), s)

    def scatter_add(base, s):
        return (view(base) * 1).scatter_(1, ints([[3, 3], [0, 0], [1, 0]], device), s,
                                         reduce="add")

    assert gradcheck(index_add, [a, source])
    assert gradcheck(index_fill, [a])
    assert gradcheck(scatter, [a, source])
    assert gradcheck(scatter_add, [a, source])


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_lerp_addcmul_addcdiv_gradcheck(device, layout):
    shape, view = LAYOUTS[layout]
    a, b, c = leaf(shape, device, 8), leaf((3, 4), device, 9), leaf((4,), device, 10)
    assert gradcheck(lambda x, y, w: kael.lerp(view(x), y, w.sigmoid()), [a, b, c])
    assert gradcheck(lambda x, y: kael.lerp(view(x), y, 0.7), [a, b])
    assert gradcheck(lambda x, y, z: kael.addcmul(view(x), y, z, value=0.5), [a, b, c])
    assert gradcheck(lambda x, y, z: kael.addcdiv(view(x), y, z.abs() + 1, value=2), [a, b, c])

"""Operators, reductions, matmul and every op function, checked against numpy."""
import math
import operator

import numpy as np
import pytest
import torch

import kael

A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=np.float32)
B = np.array([[2.0, 1.0, -3.0], [1.5, 2.0, 0.25]], dtype=np.float32)


def close(t, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(t.numpy(), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.lt, operator.le, operator.gt, operator.ge,
                                operator.eq, operator.ne])
def test_binary_operators_with_tensors_and_scalars(op):
    a, b = kael.tensor(A), kael.tensor(B)
    close(op(a, b), op(A, B))
    close(op(a, 2), op(A, np.float32(2)))
    close(op(a, 0.5), op(A, np.float32(0.5)))
    close(op(3, a), op(np.float32(3), A))  # reflected
    close(op(a, b[0]), op(A, B[0]))  # broadcasting


def test_power_matmul_unary_and_logical_operators():
    a, b = kael.tensor(A), kael.tensor(B)
    close(abs(a) ** 2, np.abs(A) ** 2)
    close(2 ** a, 2 ** A, rtol=1e-5)
    close(a @ b.T, A @ B.T)
    close(-a, -A)
    close(+a, A)
    close(abs(a), np.abs(A))
    x, y = a > 0, b > 0
    np.testing.assert_array_equal((x & y).numpy(), (A > 0) & (B > 0))
    np.testing.assert_array_equal((x | y).numpy(), (A > 0) | (B > 0))
    np.testing.assert_array_equal((x ^ y).numpy(), (A > 0) ^ (B > 0))
    np.testing.assert_array_equal((~x).numpy(), ~(A > 0))
    np.testing.assert_array_equal((kael.arange(3) & kael.arange(3)).numpy(), [0, 1, 2])
    with pytest.raises(TypeError):  # bitwise ops take integers and bool (as PyTorch)
        kael.ones(3) & kael.ones(3)


def test_scalar_dtypes_follow_pytorch():
    i = kael.tensor([1, 2, 3])
    assert (i + 1).dtype == kael.int64
    assert (i * 2.5).dtype == kael.float32
    assert (i / 2).dtype == kael.float32 and (i / 2).tolist() == [0.5, 1.0, 1.5]
    assert (kael.ones(2, dtype="f64") * 2.5).dtype == kael.float64
    assert (kael.tensor([True]) + 1).dtype == kael.int64
    assert (i > 1).dtype == kael.bool_
    assert (kael.tensor([1.0]) * np.float32(2.0)).tolist() == [2.0]


def test_in_place_operators_keep_identity():
    t = kael.ones(3)
    handle = t
    t += 1
    t *= kael.tensor([1.0, 2.0, 3.0])
    t -= 0.5
    t /= 2
    assert t is handle
    close(t, (np.array([2.0, 4.0, 6.0]) - 0.5) / 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_in_place_arithmetic_on_every_layout_matches_numpy(device, dtype):
    """add_/sub_/mul_/div_ with nothing recorded write their target in one kernel: broadcast,
    strided and 0-d operands, the target itself, and views that partly overlap the target (read
    as they were before the write, as numpy with a copy); saved tensors still see the write."""
    base = np.arange(1, 25).reshape(4, 6).astype(dtype)
    names = ("add_", "sub_", "mul_") + (("div_",) if dtype != "int64" else ())
    for name in names:
        apply = {"add_": np.add, "sub_": np.subtract, "mul_": np.multiply,
                 "div_": np.divide}[name]
        operands = [("row", lambda t: t[1], lambda a: a[1].copy()),
                    ("column", lambda t: t[:, :1], lambda a: a[:, :1].copy()),
                    ("0-d", lambda t: kael.tensor(base[0, 0], device=device), lambda a: base[0, 0]),
                    ("itself", lambda t: t, lambda a: a.copy()),
                    ("strided", lambda t: kael.tensor(np.ascontiguousarray(base.T),
                                                      device=device).t(),
                     lambda a: base.copy())]
        for label, make_kael, make_numpy in operands:
            target = kael.tensor(base, device=device)
            expected = base.copy()
            expected = apply(expected, make_numpy(expected))
            getattr(target, name)(make_kael(target))
            np.testing.assert_allclose(target.numpy(), expected, err_msg=f"{name} {label}")
        # A view shifted by one column partly overlaps its target.
        target = kael.tensor(base, device=device)
        expected = base.copy()
        expected[:, 1:] = apply(expected[:, 1:], expected[:, :-1].copy())
        getattr(target[:, 1:], name)(target[:, :-1])
        np.testing.assert_allclose(target.numpy(), expected, err_msg=f"{name} shifted")
    if dtype != "int64":
        x = kael.ones(3, dtype=getattr(kael, dtype), device=device, requires_grad=True)
        y = x.exp()
        with kael.no_grad():
            y.add_(kael.ones(3, dtype=getattr(kael, dtype), device=device))
        with pytest.raises(RuntimeError, match="modified by an inplace"):
            y.sum().backward()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_square_powers_match_numpy_on_special_values(device, dtype):
    """x ** 2 and pow(x, tensor of 2s) are x * x (the power kernel's shortcut): -0.0, the
    infinities, NaN and subnormals included; other exponents beside them still go through pow."""
    values = np.array([-0.0, 0.0, np.inf, -np.inf, np.nan, 3.5, -2.5, 1e-30, 1e30, 1e-40],
                      dtype=dtype)
    x = kael.tensor(values, device=device)
    exponents = np.array([2, 2, 2, 2, 2, 2, 3, 2, 0.5, 2], dtype=dtype)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((x ** 2).numpy(), values * values)
        powers = kael.pow(x, kael.tensor(exponents, device=device)).numpy()
        squares = exponents == 2  # exact; the other exponents within a unit of the last place
        np.testing.assert_array_equal(powers[squares], np.power(values, exponents)[squares])
        np.testing.assert_allclose(powers[~squares], np.power(values, exponents)[~squares],
                                   rtol=4 * np.finfo(dtype).eps)


@pytest.mark.parametrize("name", ["exp", "sqrt", "floor", "neg", "relu", "sigmoid", "isnan"])
def test_one_input_ops_of_permuted_tensors_keep_their_layout_as_torch(device, name):
    """A one-input op of a transposed or permuted dense tensor returns its result in the input's
    memory order, strides and all, as PyTorch's preserve_format: the kernel walks both in order.
    Values match numpy; sliced (not dense) inputs still give contiguous results."""
    values = np.abs(np.random.default_rng(2).standard_normal((3, 4, 5))).astype(np.float32)
    base = kael.tensor(values, device=device)
    reference = torch.tensor(values)
    for permutation in [(1, 0, 2), (2, 1, 0), (1, 2, 0)]:
        got = getattr(kael, name)(base.permute(*permutation))
        want = getattr(torch, name)(reference.permute(*permutation))
        assert got.stride() == want.stride(), (name, permutation)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    sliced = getattr(kael, name)(base[:, ::2])
    assert sliced.is_contiguous()
    np.testing.assert_allclose(sliced.numpy(), getattr(torch, name)(reference[:, ::2]).numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "lt",
                                  "eq"])
def test_ops_of_several_inputs_follow_the_first_full_sized_one_as_torch(device, name):
    """The result takes the memory order of the first input with the result's shape (PyTorch's
    TensorIterator lets it order the dims), so a permuted x walks memory in order and a kept
    amax repeats along the runs (the cpu plugin's wide loops with a repeated operand). Strides
    and values as torch's, for x against its amax keeping each dim, x contiguous or permuted,
    both argument orders, and rows long enough for the vector loops and their tails."""
    rng = np.random.default_rng(3)
    values = (np.abs(rng.standard_normal((5, 37, 40))) + 0.5).astype(np.float32)
    other = (np.abs(rng.standard_normal((5, 37, 40))) + 0.5).astype(np.float32)
    base, reference = kael.tensor(values, device=device), torch.tensor(values)
    full, full_reference = kael.tensor(other, device=device), torch.tensor(other)
    function, torch_function = getattr(kael, name), getattr(torch, name)
    for permutation in [(0, 1, 2), (2, 1, 0), (1, 2, 0)]:
        x, x_reference = base.permute(*permutation), reference.permute(*permutation)
        y, y_reference = full.reshape(x.shape), full_reference.reshape(x_reference.shape)
        pairs = [(x, y, x_reference, y_reference), (y, x, y_reference, x_reference)]
        for dims in [(1, 2), (0, 2), (0, 1)]:
            kept, kept_reference = x.amax(dim=dims, keepdim=True), x_reference.amax(
                dim=dims, keepdim=True)
            pairs += [(x, kept, x_reference, kept_reference),
                      (kept, x, kept_reference, x_reference)]
        for a, b, a_reference, b_reference in pairs:
            got, want = function(a, b), torch_function(a_reference, b_reference)
            assert got.shape == tuple(want.shape)
            assert got.stride() == want.stride(), (name, permutation, a.stride(), b.stride())
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-6)


def test_in_place_ops_on_results_laid_out_as_a_permuted_input_keep_the_gradient(device):
    """A result in its input's memory order is a tensor of its own, not a view of hidden
    storage: an in-place op on it rewrites its own history, and the gradient reaches the input
    (as torch's)."""
    values = np.arange(12, dtype=np.float64).reshape(4, 3)
    for make in [lambda lib, t: t * 1, lambda lib, t: -t, lambda lib, t: t + t]:
        grads = []
        for lib in (kael, torch):
            a = lib.tensor(values, requires_grad=True)
            y = make(lib, a.t())
            assert y.stride() == (1, 3)
            y.index_add_(1, lib.tensor([3, 0]), lib.ones(3, 2, dtype=lib.float64), alpha=2)
            (y * y).sum().backward()
            grads.append(a.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_unknown_operand_types_give_type_error():
    with pytest.raises(TypeError):
        kael.ones(2) + "x"
    assert (kael.ones(2) == "x") is False


@pytest.mark.parametrize("name,reference", [
    ("exp", np.exp), ("sin", np.sin), ("cos", np.cos), ("tanh", np.tanh), ("abs", np.abs),
    ("sign", np.sign), ("square", np.square), ("neg", np.negative),
    ("relu", lambda x: np.maximum(x, 0)), ("sigmoid", lambda x: 1 / (1 + np.exp(-x)))])
def test_unary_functions_and_methods(name, reference):
    a = kael.tensor(A)
    close(getattr(kael, name)(a), reference(A))
    close(getattr(a, name)(), reference(A))


def test_positive_domain_functions():
    p = np.abs(A) + 0.5
    t = kael.tensor(p)
    close(kael.log(t), np.log(p))
    close(t.sqrt(), np.sqrt(p))
    close(t.rsqrt(), 1 / np.sqrt(p))
    close(t.reciprocal(), 1 / p)
    close(kael.gelu(t), 0.5 * p * (1 + np.vectorize(math.erf)(p / math.sqrt(2))), rtol=1e-4)
    assert kael.gelu(t, approximate="tanh").shape == t.shape


def test_binary_functions():
    a, b = kael.tensor(A), kael.tensor(B)
    close(kael.maximum(a, b), np.maximum(A, B))
    close(a.minimum(b), np.minimum(A, B))
    close(kael.pow(kael.abs(a), 0.5), np.abs(A) ** 0.5)
    close(kael.add(2, a), A + 2)
    close(a.sub(b), A - B)
    close(kael.mul(a, b), A * B)
    close(kael.div(a, 4), A / 4)
    np.testing.assert_array_equal(kael.logical_and(a > 0, b > 0).numpy(), (A > 0) & (B > 0))
    np.testing.assert_array_equal(kael.logical_or(a > 0, b > 0).numpy(), (A > 0) | (B > 0))
    np.testing.assert_array_equal(kael.logical_not(a > 0).numpy(), ~(A > 0))
    np.testing.assert_array_equal(kael.eq(a, a).numpy(), np.ones_like(A, dtype=bool))


def test_where_clamp_masked_fill():
    a = kael.tensor(A)
    close(kael.where(a > 0, a, 0.0), np.where(A > 0, A, 0))
    close(kael.where(a > 0, 1.0, kael.tensor(B)), np.where(A > 0, 1, B))
    close(a.clamp(-1, 1), np.clip(A, -1, 1))
    close(kael.clamp(a, min=0), np.maximum(A, 0))
    close(a.clamp(max=0.0), np.minimum(A, 0))
    assert kael.tensor([1, 5, 9]).clamp(2, 6).tolist() == [2, 5, 6]
    close(a.masked_fill(a < 0, -9), np.where(A < 0, -9, A))
    assert kael.tensor([1, 2]).masked_fill(kael.tensor([True, False]), 2 ** 60).tolist() == \
        [2 ** 60, 2]
    t = kael.tensor(A)
    t.masked_fill_(t > 0, 0.0)
    close(t, np.minimum(A, 0))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "argmax", "argmin"])
def test_reductions_with_dim_and_keepdim(name):
    data = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    t = kael.tensor(data)
    reference = getattr(np, name)
    close(getattr(kael, name)(t), reference(data), rtol=1e-4)
    # max and min along a dim give (values, indices), as torch.return_types.
    values = (lambda r: r.values) if name in ("max", "min") else (lambda r: r)
    for dim in [0, 1, -1]:
        close(values(getattr(t, name)(dim=dim)), reference(data, axis=dim), rtol=1e-4)
        close(values(getattr(kael, name)(t, dim, keepdim=True)),
              reference(data, axis=dim, keepdims=True), rtol=1e-4)


def test_more_reductions():
    data = np.random.default_rng(1).standard_normal((4, 6))
    t = kael.tensor(data)
    close(t.sum(dim=(0, 1)), data.sum())
    close(kael.mean(t, (0,), keepdim=True), data.mean(axis=0, keepdims=True))
    close(t.sum(keepdim=True), data.sum(keepdims=True))
    close(kael.var(t, dim=1), data.var(axis=1, ddof=1))
    close(t.std(correction=0), data.std())
    close(kael.norm(t), np.linalg.norm(data))
    close(kael.logsumexp(t, 1), np.log(np.exp(data).sum(axis=1)))
    assert kael.all(t > -100).item() and not kael.any(t > 100).item()
    np.testing.assert_array_equal((t > 0).any(dim=0).numpy(), (data > 0).any(axis=0))
    np.testing.assert_array_equal((t > 0).all(dim=1, keepdim=True).numpy(),
                                  (data > 0).all(axis=1, keepdims=True))


def test_matmul_shapes():
    rng = np.random.default_rng(2)
    for sa, sb in [((3, 4), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4, 2)), ((4,), (4, 3)),
                   ((2, 1, 3, 4), (5, 4, 2))]:
        x = rng.standard_normal(sa).astype(np.float32)
        y = rng.standard_normal(sb).astype(np.float32)
        close(kael.matmul(kael.tensor(x), kael.tensor(y)), x @ y, rtol=1e-4)
        close(kael.tensor(x).matmul(kael.tensor(y)), x @ y, rtol=1e-4)
    with pytest.raises(ValueError):
        kael.ones(2, 3) @ kael.ones(2, 3)


def test_index_ops():
    data = np.arange(12.0).reshape(3, 4)
    t = kael.tensor(data)
    index = np.array([[0, 3], [1, 1], [2, 0]])
    close(kael.gather(t, 1, kael.tensor(index)), np.take_along_axis(data, index, 1))
    close(t.index_select(0, kael.tensor([2, 0])), data[[2, 0]])
    target = kael.zeros(3, 4, dtype="f64")
    target.scatter_add_(1, kael.tensor(index), kael.ones(3, 2, dtype="f64"))
    expected = np.zeros((3, 4))
    for row in range(3):
        for column in index[row]:
            expected[row, column] += 1
    close(target, expected)
    close(kael.scatter_add(kael.zeros(3, 4, dtype="f64"), 1, kael.tensor(index),
                           kael.ones(3, 2, dtype="f64")), expected)
    with pytest.raises(IndexError):
        kael.gather(t, 1, kael.tensor([[7]]))


def test_nn_functions():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    t = kael.tensor(x)
    softmax = np.exp(x) / np.exp(x).sum(axis=1, keepdims=True)
    close(kael.softmax(t, 1), softmax)
    close(t.log_softmax(dim=-1), np.log(softmax), rtol=1e-4)
    targets = np.array([0, 4, 2, 1])
    losses = -np.log(softmax[np.arange(4), targets])
    close(kael.cross_entropy(t, kael.tensor(targets)), losses.mean(), rtol=1e-4)
    close(kael.cross_entropy(t, kael.tensor(targets), reduction="none"), losses, rtol=1e-4)
    close(kael.cross_entropy(t, kael.tensor(targets), reduction="sum"), losses.sum(), rtol=1e-4)
    normed = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
    close(kael.layer_norm(t), normed, rtol=1e-4, atol=1e-5)
    w, b = np.full(5, 2.0, np.float32), np.full(5, 0.5, np.float32)
    close(kael.layer_norm(t, kael.tensor(w), kael.tensor(b)), normed * 2 + 0.5, rtol=1e-4,
          atol=1e-5)
    table = rng.standard_normal((10, 3)).astype(np.float32)
    ids = np.array([[1, 9], [0, 0]])
    close(kael.embedding(kael.tensor(table), kael.tensor(ids)), table[ids])
    weight, bias = rng.standard_normal((3, 5)).astype(np.float32), np.ones(3, np.float32)
    close(kael.linear(t, kael.tensor(weight), kael.tensor(bias)), x @ weight.T + 1, rtol=1e-4)
    close(kael.linear(t, kael.tensor(weight)), x @ weight.T, rtol=1e-4)
    assert kael.dropout(t, 0.5, training=False).tolist() == t.tolist()
    dropped = kael.dropout(kael.ones(1000), p=0.5)
    assert set(dropped.tolist()) <= {0.0, 2.0} and 300 < dropped.sum().item() / 2 < 700
    with pytest.raises(ValueError):
        kael.dropout(t, 1.5)
    close(kael._kael.relu_backward(t, kael.ones(4, 5)), (x > 0).astype(np.float32))
    assert kael._kael.sigmoid_backward(t, kael.ones(4, 5)).shape == (4, 5)


def test_joins_and_sequences():
    a, b = kael.tensor([[1, 2]]), kael.tensor([[3, 4]])
    assert kael.cat([a, b]).tolist() == [[1, 2], [3, 4]]
    assert kael.cat([a, b], dim=1).tolist() == [[1, 2, 3, 4]]
    assert kael.stack([a[0], b[0]], dim=1).tolist() == [[1, 3], [2, 4]]
    data = np.array([[3.0, 1.0, 2.0], [0.0, -1.0, 5.0]])
    t = kael.tensor(data)
    values, indices = kael.sort(t)
    close(values, np.sort(data))
    np.testing.assert_array_equal(indices.numpy(), np.argsort(data, kind="stable"))
    result = t.sort(dim=0, descending=True)
    close(result.values, -np.sort(-data, axis=0))
    np.testing.assert_array_equal(t.argsort(dim=1).numpy(), np.argsort(data, axis=1))
    top = kael.topk(t, 2)
    close(top.values, [[3.0, 2.0], [5.0, 0.0]])
    np.testing.assert_array_equal(top.indices.numpy(), [[0, 2], [2, 0]])
    close(t.topk(1, dim=0, largest=False).values, data.min(axis=0, keepdims=True))
    close(kael.cumsum(t, 1), np.cumsum(data, axis=1))
    assert kael.tensor([True, True, False]).cumsum(0).tolist() == [1, 2, 2]


def test_allclose():
    assert kael.allclose(kael.ones(2), kael.ones(2) + 1e-9)
    assert not kael.ones(2).allclose(kael.zeros(2))
    assert kael.allclose(kael.tensor([1.0]), kael.tensor([1.1]), atol=0.2)


def test_topk_is_the_start_of_a_stable_sort():
    rng = np.random.default_rng(5)
    data = rng.integers(0, 4, size=(6, 300)).astype(np.float32)
    data[0, 10] = np.nan
    data[2, :5] = np.nan
    data[3, 7] = -0.0
    key = np.where(np.isnan(data), np.inf, data)  # NaN sorts as the largest value
    t = kael.tensor(data)
    for largest in (True, False):
        order = np.argsort(-key if largest else key, axis=1, kind="stable")
        for k in (0, 1, 17, 300):
            top = t.topk(k, dim=1, largest=largest)
            np.testing.assert_array_equal(top.indices.numpy(), order[:, :k])
            np.testing.assert_array_equal(
                top.values.numpy(), np.take_along_axis(data, order[:, :k], 1)
            )
            torch = pytest.importorskip("torch")
            want = torch.topk(torch.tensor(data), k, dim=1, largest=largest).values.numpy()
            np.testing.assert_array_equal(top.values.numpy(), want)


def test_split_and_chunk_match_numpy_and_carry_gradients():
    data = np.arange(14, dtype=np.float32).reshape(2, 7)
    t = kael.tensor(data)
    pieces = kael.split(t, 3, dim=1)
    assert isinstance(pieces, tuple) and len(pieces) == 3
    for got, want in zip(pieces, np.split(data, [3, 6], axis=1)):
        close(got, want)
    close(t.split([1, 6], dim=1)[1], data[:, 1:])
    assert [tuple(p.shape) for p in t.chunk(2, dim=1)] == [(2, 4), (2, 3)]
    with pytest.raises(ValueError):
        kael.split(t, [3, 3], dim=1)
    x = kael.tensor(data.astype(np.float64), requires_grad=True)
    a, b = x.split(4, dim=1)
    (a * 2.0).sum().backward()
    expected = np.zeros_like(data, dtype=np.float64)
    expected[:, :4] = 2.0
    close(x.grad, expected)


@pytest.mark.parametrize("symbol, op", [("+", operator.add), ("-", operator.sub),
                                        ("*", operator.mul), ("/", operator.truediv)])
def test_tensor_operators_from_the_number_slots(device, symbol, op):
    """Two tensors take the direct slot; anything else the bound methods, with their rules."""
    a = kael.tensor(A, device=device)
    b = kael.tensor(A[::-1].copy() + 5, device=device)
    close = lambda t, expected: np.testing.assert_allclose(t.cpu().numpy(), expected, rtol=1e-6)
    close(op(a, b), op(A, A[::-1] + 5))
    close(op(a, 2), op(A, np.float32(2)))
    close(op(2, a), op(np.float32(2), A))
    assert op(kael.tensor([1, 2], device=device), kael.tensor([3, 4], device=device)).dtype == (
        kael.float32 if symbol == "/" else kael.int64)

    with pytest.raises(ValueError, match="cannot be broadcast"):
        op(a, kael.ones(4, device=device))
    with pytest.raises(TypeError):  # unsupported operand, or str's own message for + and *
        op(a, "x")
    with pytest.raises(TypeError):
        op("x", a)
    x = kael.tensor(A, device=device).requires_grad_()
    y = kael.tensor(A + 3, device=device).requires_grad_()
    op(x, y).sum().backward()
    assert x.grad is not None and y.grad is not None

"""Reductions, neural-network functions, matmul, indexing, joins and the sequence family."""

import math

import numpy as np

I64_MAX = 2**63 - 1


def unreduce(g, dim, keepdim):
    """d loss / d output with the reduced dimension back, so it broadcasts over the input."""
    return g if dim is None or keepdim else np.expand_dims(g, dim)


def reduce_cases(cases, Input, op, forward, backward, make, extra_params=None):
    layouts = [("f64/all", (3, 4), "f64", [], None, False),
               ("f64/dim0", (3, 4), "f64", [], 0, False),
               ("f64/dim1_keepdim_transpose", (5, 3), "f64", [("transpose", 0, 1)], 1, True),
               ("f32/dim-1_permute", (4, 2, 3), "f32", [("permute", [1, 2, 0])], -1, False),
               ("f32/all_keepdim_slice", (3, 8), "f32", [("slice", 1, 1, 8, 2)], None, True)]
    for label, shape, dtype, view, dim, keepdim in layouts:
        params = dict(extra_params or {}, dim=dim, keepdim=keepdim)
        def fwd(x, dim=dim, keepdim=keepdim):
            return forward(x, dim, keepdim)
        def bwd(g, x, dim=dim, keepdim=keepdim):
            return [backward(unreduce(g, dim, keepdim), x, dim)]
        suffix = "".join(f"_{key}{value}" for key, value in (extra_params or {}).items())
        cases.add(f"{op}/{label}{suffix}", op, [Input(make(*shape), dtype, view)], fwd, bwd,
                  params)


def others_product(x, dim):
    """For each element, the product of the other elements of its line (all of x: dim None)."""
    lines = np.moveaxis(x, dim, -1) if dim is not None else x.reshape(1, -1)
    out = np.empty_like(lines)
    for index in np.ndindex(lines.shape[:-1]):
        for j in range(lines.shape[-1]):
            out[index + (j,)] = np.prod(np.delete(lines[index], j))
    return np.moveaxis(out, -1, dim) if dim is not None else out.reshape(x.shape)


def one_hot_at(x, g, dim, index_of):
    grad = np.zeros(x.shape)
    if dim is None:
        grad.reshape(-1)[index_of(x.reshape(-1), None)] = np.asarray(g).reshape(())
        return grad
    index = np.expand_dims(index_of(x, dim), dim)
    np.put_along_axis(grad, index, np.broadcast_to(g, index.shape), dim)
    return grad


def reduction_cases(cases, Input):
    def mean_grad(g, x, dim):
        return g / (x.size if dim is None else x.shape[dim])
    reduce_cases(cases, Input, "sum", lambda x, d, k: np.sum(x, d, keepdims=k),
                 lambda g, x, d: g, cases.normal)
    reduce_cases(cases, Input, "mean", lambda x, d, k: np.mean(x, d, keepdims=k), mean_grad,
                 cases.normal)
    near_one = lambda *shape: cases.positive(*shape, low=0.6, high=1.5)  # noqa: E731
    reduce_cases(cases, Input, "prod", lambda x, d, k: np.prod(x, d, keepdims=k),
                 lambda g, x, d: g * others_product(x, d), near_one)
    for op, numpy_op, index_of in [("max", np.max, np.argmax), ("min", np.min, np.argmin)]:
        reduce_cases(cases, Input, op, lambda x, d, k, f=numpy_op: f(x, d, keepdims=k),
                     lambda g, x, d, i=index_of: one_hot_at(x, g, d, i), cases.distinct)
    for correction in (0, 1):
        def var(x, d, k, c=correction):
            return np.var(x, d, ddof=c, keepdims=k)
        def var_grad(g, x, d, c=correction):
            n = x.size if d is None else x.shape[d]
            return g * 2 * (x - np.mean(x, d, keepdims=True)) / (n - c)
        def std_grad(g, x, d, c=correction):
            return var_grad(g, x, d, c) / (2 * np.std(x, d, ddof=c, keepdims=True))
        params = {"correction": correction}
        reduce_cases(cases, Input, "var", var, var_grad, cases.normal, params)
        reduce_cases(cases, Input, "stddev", lambda x, d, k, c=correction:
                     np.std(x, d, ddof=c, keepdims=k), std_grad, cases.normal, params)

    zeros = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.5, 0.0, 3.0], [1.0, 2.0, -0.5, 0.8]])
    cases.add("prod/f64/zeros_dim1", "prod", [Input(zeros, "f64")], lambda x: np.prod(x, 1),
              lambda g, x: [g[:, None] * others_product(x, 1)], {"dim": 1, "keepdim": False})
    cases.add("prod/f64/one_zero_all", "prod", [Input(zeros[0], "f64")], np.prod,
              lambda g, x: [g * others_product(x, None)], {"dim": None, "keepdim": False})
    wide = Input([[2**32, 2**32, 3], [5, -7, 11], [2**62, 3, 1]], "i64")
    ints = Input([[4, -9, 2**62, 0], [7, 7, -1, I64_MAX]], "i64")
    nan = Input([[1.0, math.nan, 3.0], [2.0, 5.0, -1.0], [math.nan, math.inf, math.nan]], "f64")
    ties = Input([[1.0, 3.0, 3.0, 0.0], [-2.0, -2.0, 5.0, 5.0]], "f64")
    forward_only = [
        ("sum", "i64/wraparound", wide, 1, np.sum), ("prod", "i64/wraparound", wide, 1, np.prod),
        ("sum", "i64/all", wide, None, np.sum),
        ("sum", "bool/dim0", Input([[True, False, True], [True, True, False]], "bool"), 0,
         lambda x, axis, keepdims: np.sum(x, axis, dtype=np.int64, keepdims=keepdims)),
        ("max", "i64/dim1", ints, 1, np.max), ("min", "i64/dim0", ints, 0, np.min),
        ("max", "f64/nan_dim1", nan, 1, np.max), ("min", "f64/nan_all", nan, None, np.min),
        ("argmax", "f64/nan_dim1", nan, 1, np.argmax), ("argmin", "f64/nan_dim0", nan, 0,
                                                        np.argmin),
        ("argmax", "f64/ties_dim1", ties, 1, np.argmax), ("argmin", "f64/ties_all", ties, None,
                                                          np.argmin),
        ("argmax", "i64/dim0", ints, 0, np.argmax), ("argmin", "i64/dim1", ints, 1, np.argmin),
    ]
    truth = [Input(cases.rng.random((3, 4)) < 0.7, "bool"),
             Input([[0.0, -0.0, math.nan], [1.0, 2.0, -3.0]], "f64"),
             Input([[0, 5, I64_MAX], [-1, 2, 3]], "i64")]
    for op, numpy_op in [("all", np.all), ("any", np.any)]:
        for x in truth:
            for dim, keepdim in [(None, False), (0, True), (1, False)]:
                forward_only.append((op, f"{x.dtype}/{dim}_{keepdim}", x, dim, numpy_op,
                                     keepdim))
    for spec in forward_only:
        op, label, x, dim, numpy_op = spec[:5]
        keepdim = spec[5] if len(spec) > 5 else False
        cases.add(f"{op}/{label}", op, [x],
                  lambda x, f=numpy_op, d=dim, k=keepdim: f(x, axis=d, keepdims=k),
                  params={"dim": dim, "keepdim": keepdim})
    # Longer than one 4096-element block of the cpu reduction: partials merged across blocks,
    # ties and NaN in later blocks. Multiples of 1/8 keep the file small and the sums exact.
    long = cases.rng.integers(-40, 41, 5000) / 8
    long_nan = long.copy()
    long_nan[[4500, 4700]] = math.nan
    for op, label, values, dtype, numpy_op in [
            ("sum", "f64", long, "f64", np.sum), ("sum", "f32", long, "f32", np.sum),
            ("max", "f64", long, "f64", np.max), ("argmax", "f64_ties", long, "f64", np.argmax),
            ("argmin", "f32_ties", long, "f32", np.argmin),
            ("argmin", "f64_nan", long_nan, "f64", np.argmin),
            ("min", "f64_nan", long_nan, "f64", np.min)]:
        cases.add(f"{op}/{label}/multiblock", op, [Input(values, dtype, grad=False)],
                  lambda x, f=numpy_op: f(x), params={"dim": None, "keepdim": False})
    cases.add("sum/f64/empty_dim0", "sum", [Input(np.zeros((0, 3)), "f64")],
              lambda x: np.sum(x, 0), lambda g, x: [np.zeros((0, 3))],
              {"dim": 0, "keepdim": False})
    cases.add("prod/f64/empty_all", "prod", [Input(np.zeros((2, 0)), "f64", grad=False)],
              np.prod, params={"dim": None, "keepdim": False})
    for op in ("argmax", "argmin"):
        numpy_op = np.argmax if op == "argmax" else np.argmin
        x = Input(cases.distinct(5, 3), "f32", [("transpose", 0, 1)])
        for dim, keepdim in [(None, False), (0, False), (-1, True)]:
            cases.add(f"{op}/f32/{dim}_{keepdim}", op, [x],
                      lambda x, f=numpy_op, d=dim, k=keepdim: f(x, axis=d, keepdims=k),
                      params={"dim": dim, "keepdim": keepdim})

    cases.add("norm/f64", "norm", [Input(cases.normal(3, 4), "f64")], np.linalg.norm,
              lambda g, x: [g * x / np.linalg.norm(x)])
    cases.add("norm/f32/slice", "norm", [Input(cases.normal(3, 8), "f32",
                                               [("slice", 1, 0, 7, 3)])],
              np.linalg.norm, lambda g, x: [g * x / np.linalg.norm(x)])
    for label, base, dtype, view, dim, keepdim in [
            ("f64/dim1", cases.normal(3, 5), "f64", [], 1, False),
            ("f32/dim0_keepdim_transpose", cases.normal(5, 3), "f32", [("transpose", 0, 1)], 0,
             True),
            ("f64/large_dim-1", cases.normal(2, 3, 4) * 30 + 1000, "f64", [], -1, False)]:
        cases.add(f"logsumexp/{label}", "logsumexp", [Input(base, dtype, view)],
                  lambda x, d=dim, k=keepdim: logsumexp(x, d, k),
                  lambda g, x, d=dim, k=keepdim: [unreduce(g, d, k) * softmax(x, d)],
                  {"dim": dim, "keepdim": keepdim})


def logsumexp(x, dim, keepdim=False):
    top = np.max(x, dim, keepdims=True)
    out = np.log(np.sum(np.exp(x - top), dim, keepdims=True)) + top
    return out if keepdim else np.squeeze(out, dim)


def softmax(x, dim):
    e = np.exp(x - np.max(x, dim, keepdims=True))
    return e / np.sum(e, dim, keepdims=True)


def build(cases, Input):
    import reference_cases_linalg  # pylint: disable=import-outside-toplevel

    import reference_cases_elemops  # pylint: disable=import-outside-toplevel

    reduction_cases(cases, Input)
    reference_cases_linalg.build(cases, Input)
    reference_cases_elemops.build(cases, Input)

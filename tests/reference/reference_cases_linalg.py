"""Neural-network functions, matmul, gather/scatter, joins and sort/topk/cumsum."""

import math

import numpy as np

from reference_cases_nn_sequence import softmax, logsumexp

I64_MAX = 2**63 - 1


def softmax_cases(cases, Input):
    layouts = [("f64/dim1", cases.normal(3, 5), "f64", [], 1),
               ("f64/dim0", cases.normal(3, 5), "f64", [], 0),
               ("f32/dim-1_transpose", cases.normal(5, 3), "f32", [("transpose", 0, 1)], -1),
               ("f64/dim1_permute", cases.normal(4, 2, 3), "f64", [("permute", [1, 2, 0])], 1),
               ("f64/large", cases.normal(2, 4) * 50 + 800, "f64", [], 1),
               ("f64/masked", np.where(np.tri(4, 5, 0) > 0, cases.normal(4, 5), -math.inf),
                "f64", [], 1)]
    for label, base, dtype, view, dim in layouts:
        def softmax_grad(g, x, d=dim):
            y = softmax(x, d)
            return [y * (g - np.sum(g * y, d, keepdims=True))]
        def log_softmax_grad(g, x, d=dim):
            return [g - softmax(x, d) * np.sum(g, d, keepdims=True)]
        params = {"dim": dim}
        cases.add(f"softmax/{label}", "softmax", [Input(base, dtype, view)],
                  lambda x, d=dim: softmax(x, d), softmax_grad, params)
        cases.add(f"log_softmax/{label}", "log_softmax", [Input(base, dtype, view)],
                  lambda x, d=dim: x - logsumexp(x, d, True), log_softmax_grad, params)

    targets = Input([0, 3, 1, 3, 2], "i64")
    for label, base, dtype, view, reduction in [
            ("f64/mean", cases.normal(5, 4), "f64", [], "mean"),
            ("f64/sum", cases.normal(5, 4), "f64", [], "sum"),
            ("f64/none", cases.normal(5, 4), "f64", [], "none"),
            ("f32/mean_transpose", cases.normal(4, 5), "f32", [("transpose", 0, 1)], "mean"),
            ("f64/large_none", cases.normal(5, 4) * 40 + 100, "f64", [], "none")]:
        def forward(x, t, r=reduction):
            losses = logsumexp(x, 1) - x[np.arange(len(t)), t]
            return {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[r](losses)
        def backward(g, x, t, r=reduction):
            onehot = np.eye(x.shape[1])[t]
            scale = np.reshape(g, (-1, 1)) / (len(t) if r == "mean" else 1)
            return [(softmax(x, 1) - onehot) * scale, None]
        cases.add(f"cross_entropy/{label}", "cross_entropy", [Input(base, dtype, view), targets],
                  forward, backward, {"reduction": reduction})

    def layer_norm(x, *affine, eps):
        mu = np.mean(x, -1, keepdims=True)
        sigma = np.sqrt(np.mean((x - mu)**2, -1, keepdims=True) + eps)
        out = (x - mu) / sigma
        return out * (affine[0] if affine else 1) + (affine[1] if len(affine) > 1 else 0)

    def layer_norm_grad(g, x, *affine, eps):
        xhat = layer_norm(x, eps=eps)
        sigma = np.sqrt(np.var(x, -1, keepdims=True) + eps)
        gxhat = g * (affine[0] if affine else 1)
        gx = (gxhat - np.mean(gxhat, -1, keepdims=True)
              - xhat * np.mean(gxhat * xhat, -1, keepdims=True)) / sigma
        leading = tuple(range(x.ndim - 1))
        return [gx, np.sum(g * xhat, leading), np.sum(g, leading)][:1 + len(affine)]

    for label, shapes, dtype, view, eps in [
            ("f64/affine", [(3, 5), (5,), (5,)], "f64", [], 1e-5),
            ("f32/plain_3d", [(2, 3, 4)], "f32", [], 1e-5),
            ("f64/weight_transpose", [(6, 4), (6,)], "f64", [("transpose", 0, 1)], 1e-5),
            ("f32/affine_eps", [(4, 3), (3,), (3,)], "f32", [], 0.1)]:
        inputs = [Input(cases.normal(*shapes[0]), dtype, view)]
        inputs += [Input(cases.normal(*shape), dtype) for shape in shapes[1:]]
        cases.add(f"layer_norm/{label}", "layer_norm", inputs,
                  lambda *a, e=eps: layer_norm(*a, eps=e),
                  lambda g, *a, e=eps: layer_norm_grad(g, *a, eps=e), {"eps": eps})

    def embedding_grad(g, w, i):
        grad = np.zeros(w.shape)
        np.add.at(grad, i, g)
        return [grad, None]
    indices = Input([[0, 2, 5, 2], [1, 0, 0, 4]], "i64")
    cases.add("embedding/f64", "embedding", [Input(cases.normal(6, 3), "f64"), indices],
              lambda w, i: w[i], embedding_grad)
    cases.add("embedding/f32/transpose_1d", "embedding",
              [Input(cases.normal(3, 6), "f32", [("transpose", 0, 1)]),
               Input([3, 3, 1, 5, 0], "i64")], lambda w, i: w[i], embedding_grad)

    def linear_grad(g, x, w, *bias):
        rows = g.reshape(-1, w.shape[0])
        grads = [g @ w, rows.T @ x.reshape(-1, w.shape[1])]
        return grads + [rows.sum(0)] if bias else grads
    for label, shapes, dtype, views in [
            ("f64/bias_3d", [(2, 3, 4), (5, 4), (5,)], "f64", [[], [], []]),
            ("f32/transposed_weight", [(3, 4), (4, 5)], "f32", [[], [("transpose", 0, 1)]]),
            ("f64/bias_1d", [(4,), (2, 4), (2,)], "f64", [[], [], []])]:
        inputs = [Input(cases.normal(*shape), dtype, view) for shape, view in zip(shapes, views)]
        cases.add(f"linear/{label}", "linear", inputs,
                  lambda x, w, *b: x @ w.T + (b[0] if b else 0), linear_grad)


def matmul_grad(g, a, b):
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    g2 = np.asarray(g)
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -1 if b.ndim == 1 else -2)
    if b.ndim == 1:
        g2 = np.expand_dims(g2, -1)
    grad_a = g2 @ np.swapaxes(b2, -1, -2)
    grad_b = np.swapaxes(a2, -1, -2) @ g2
    grad_a = grad_a[..., 0, :] if a.ndim == 1 else grad_a
    grad_b = grad_b[..., 0] if b.ndim == 1 else grad_b
    return [grad_a, grad_b]


def matmul_cases(cases, Input):
    for label, (shape_a, view_a), (shape_b, view_b), dtype in [
            ("f64/2d", ((3, 4), []), ((4, 2), []), "f64"),
            ("f32/2d_views", ((4, 3), [("transpose", 0, 1)]), ((4, 5), [("slice", 1, 0, 5, 2)]),
             "f32"),
            ("f64/batched_broadcast", ((2, 3, 4), []), ((4, 5), []), "f64"),
            ("f64/batched_4d", ((2, 1, 3, 4), []), ((3, 4, 2), []), "f64"),
            ("f32/batched_permute", ((4, 2, 3), [("permute", [1, 2, 0])]), ((2, 4, 2), []),
             "f32"),
            ("f64/vector_matrix", ((4,), []), ((4, 3), []), "f64"),
            ("f64/matrix_vector", ((3, 4), []), ((4,), []), "f64"),
            ("f64/vector_vector", ((4,), []), ((8,), [("slice", 0, 1, 8, 2)]), "f64"),
            ("f32/batched_vector", ((2, 3, 4), []), ((4,), []), "f32"),
            ("f64/vector_batched", ((4,), []), ((2, 4, 3), []), "f64"),
            ("f64/expand_batch", ((1, 3, 4), [("expand", [2, 3, 4])]), ((2, 4, 2), []), "f64")]:
        inputs = [Input(cases.normal(*shape_a), dtype, view_a),
                  Input(cases.normal(*shape_b), dtype, view_b)]
        cases.add(f"matmul/{label}", "matmul", inputs, np.matmul, matmul_grad)
    cases.add("matmul/mixed", "matmul", [Input(cases.normal(2, 3), "f32"),
                                         Input(cases.normal(3, 2), "f64")],
              np.matmul, matmul_grad)


def positions(index, axis):
    grids = list(np.indices(index.shape))
    grids[axis] = index
    return tuple(grids)


def index_cases(cases, Input):
    def gather_grad(g, data, index, axis):
        grad = np.zeros(data.shape)
        np.add.at(grad, positions(index, axis), g)
        return [grad, None]
    gathers = [
        ("f64/axis1", (3, 4), "f64", [], 1, [[0, 3, 3], [3, 0, 2], [1, 1, 0]]),
        ("f64/axis0", (3, 4), "f64", [], 0, [[2, 0, 1, 2], [0, 0, 2, 1]]),
        ("f64/smaller_index", (3, 5), "f64", [], 1, [[4, 0, 4], [1, 1, 2]]),
        ("f32/axis0_transpose", (4, 3), "f32", [("transpose", 0, 1)], 0, [[2, 1, 0, 0]]),
        ("f64/3d_axis2", (2, 3, 4), "f64", [], 2, [[[3, 0], [1, 1]], [[2, 2], [0, 3]]]),
    ]
    for label, shape, dtype, view, axis, index in gathers:
        cases.add(f"gather/{label}", "gather",
                  [Input(cases.normal(*shape), dtype, view), Input(index, "i64")],
                  lambda d, i, a=axis: d[positions(i, a)],
                  lambda g, d, i, a=axis: gather_grad(g, d, i, a), {"axis": axis})
    cases.add("gather/i64", "gather", [Input([[5, I64_MAX, -3], [7, 8, 9]], "i64"),
                                       Input([[1, 1, 0], [2, 0, 2]], "i64")],
              lambda d, i: d[positions(i, 1)], params={"axis": 1})

    def select_grad(g, data, index, axis):
        grad = np.zeros(data.shape)
        moved = np.moveaxis(grad, axis, 0)
        np.add.at(moved, index, np.moveaxis(g, axis, 0))
        return [grad, None]
    for label, shape, dtype, view, axis, index in [
            ("f64/axis0", (4, 3), "f64", [], 0, [3, 0, 0, 3]),
            ("f32/axis1_transpose", (5, 3), "f32", [("transpose", 0, 1)], 1, [4, 2, 4]),
            ("f64/3d_axis1", (2, 4, 3), "f64", [], 1, [1, 1, 3, 0, 2])]:
        cases.add(f"index_select/{label}", "index_select",
                  [Input(cases.normal(*shape), dtype, view), Input(index, "i64")],
                  lambda d, i, a=axis: np.take(d, i, a),
                  lambda g, d, i, a=axis: select_grad(g, d, i, a), {"axis": axis})
    cases.add("index_select/i64", "index_select",
              [Input([[5, I64_MAX], [-3, 7]], "i64"), Input([1, 0, 1], "i64")],
              lambda d, i: np.take(d, i, 0), params={"axis": 0})

    def scatter_add(data, index, source, axis):
        out = data.copy()
        region = tuple(slice(0, n) for n in index.shape)
        np.add.at(out, positions(index, axis), source[region])
        return out

    def scatter_grad(g, data, index, source, axis):
        grad_source = np.zeros(source.shape)
        grad_source[tuple(slice(0, n) for n in index.shape)] = g[positions(index, axis)]
        return [g, None, grad_source]
    for label, shapes, dtype, views, axis, index in [
            ("f64/axis1", [(3, 4), (3, 3)], "f64", [[], []], 1,
             [[0, 3, 0], [2, 2, 2], [3, 1, 0]]),
            ("f32/axis0_larger_source", [(4, 3), (3, 5)], "f32",
             [[("transpose", 0, 1)], []], 0, [[2, 0, 1, 1], [0, 0, 1, 1]]),
            ("f64/source_view", [(2, 3), (6, 2)], "f64", [[], [("transpose", 0, 1)]], 1,
             [[2, 2, 0, 1], [1, 0, 0, 0]])]:
        inputs = [Input(cases.normal(*shapes[0]), dtype, views[0]), Input(index, "i64"),
                  Input(cases.normal(*shapes[1]), dtype, views[1])]
        cases.add(f"scatter_add/{label}", "scatter_add", inputs,
                  lambda d, i, s, a=axis: scatter_add(d, i, s, a),
                  lambda g, d, i, s, a=axis: scatter_grad(g, d, i, s, a), {"axis": axis})
    cases.add("scatter_add/i64", "scatter_add",
              [Input([[1, 2], [3, I64_MAX]], "i64"), Input([[1, 1], [1, 0]], "i64"),
               Input([[10, 20], [1, 5]], "i64")],
              lambda d, i, s: scatter_add(d, i, s, 1), params={"axis": 1})


def join_cases(cases, Input):
    def cat_grad(g, *xs, dim):
        cuts = np.cumsum([x.shape[dim] for x in xs])[:-1]
        return np.split(g, cuts, axis=dim)
    for label, specs, dim in [
            ("f64/dim0", [((2, 3), "f64", []), ((1, 3), "f64", []), ((3, 3), "f64", [])], 0),
            ("f32/dim1_views", [((2, 3), "f32", [("transpose", 0, 1)]),
                                ((3, 8), "f32", [("slice", 1, 0, 8, 2)])], 1),
            ("mixed/dim-1", [((2, 2), "f32", []), ((2, 3), "f64", [])], -1),
            ("f64/1d_with_empty", [((3,), "f64", []), ((0,), "f64", []), ((2,), "f64", [])], 0)]:
        inputs = [Input(cases.normal(*shape), dtype, view) for shape, dtype, view in specs]
        cases.add(f"cat/{label}", "cat", inputs, lambda *xs, d=dim: np.concatenate(xs, d),
                  lambda g, *xs, d=dim: cat_grad(g, *xs, dim=d), {"dim": dim})
    cases.add("cat/i64_bool", "cat", [Input([[1, I64_MAX]], "i64"), Input([[True, False]], "bool")],
              lambda a, b: np.concatenate([a, b.astype(np.int64)]), params={"dim": 0})
    for label, specs, dim in [
            ("f64/dim0", [((2, 3), "f64", [])] * 3, 0),
            ("f32/dim1_views", [((3, 2), "f32", [("transpose", 0, 1)]), ((2, 3), "f32", [])], 1),
            ("f64/dim-1", [((2, 3), "f64", []), ((2, 6), "f64", [("slice", 1, 1, 6, 2)])], -1),
            ("mixed/dim0", [((3,), "f64", []), ((3,), "f32", [])], 0)]:
        inputs = [Input(cases.normal(*shape), dtype, view) for shape, dtype, view in specs]
        cases.add(f"stack/{label}", "stack", inputs, lambda *xs, d=dim: np.stack(xs, d),
                  lambda g, *xs, d=dim: [np.take(g, k, d) for k in range(len(xs))],
                  {"dim": dim})


def stable_order(x, dim, descending):
    """Stable sort indices along dim; NaN after every number (first when descending)."""
    lines = np.moveaxis(np.asarray(x), dim, -1)
    order = np.empty(lines.shape, dtype=np.int64)
    for index in np.ndindex(lines.shape[:-1]):
        line = lines[index].tolist()
        def key(j, line=line):
            value = line[j]
            nan = isinstance(value, float) and math.isnan(value)
            return (0, 0) if nan and descending else ((1, 0) if nan else
                                                     (0 if not descending else 1,
                                                      -value if descending else value))
        order[index] = sorted(range(len(line)), key=key)
    return np.moveaxis(order, -1, dim)


def sequence_cases(cases, Input):
    def scatter_back(g, x, order, dim):
        grad = np.zeros(x.shape)
        np.put_along_axis(grad, order, g, dim)
        return grad
    for label, base, dtype, view, dim, descending in [
            ("f64/dim-1", cases.distinct(3, 5), "f64", [], -1, False),
            ("f32/dim0_descending_transpose", cases.distinct(5, 3), "f32", [("transpose", 0, 1)],
             0, True),
            ("f64/3d_dim1_descending", cases.distinct(2, 4, 3), "f64", [], 1, True)]:
        params = {"dim": dim, "descending": descending}
        def sort(x, d=dim, desc=descending):
            order = stable_order(x, d, desc)
            return [np.take_along_axis(x, order, d), order]
        cases.add(f"sort/{label}", "sort", [Input(base, dtype, view)], sort,
                  lambda g, x, d=dim, desc=descending:
                  [scatter_back(g, x, stable_order(x, d, desc), d)], params)
        for k, largest in [(2, True), (3, False)]:
            def topk(x, d=dim, k=k, largest=largest):
                order = np.take(stable_order(x, d, largest), np.arange(k), d)
                return [np.take_along_axis(x, order, d), order]
            cases.add(f"topk/{label}_k{k}_{largest}", "topk", [Input(base, dtype, view)], topk,
                      lambda g, x, d=dim, k=k, largest=largest: [scatter_back(
                          g, x, np.take(stable_order(x, d, largest), np.arange(k), d), d)],
                      {"dim": dim, "k": k, "largest": largest})
    nan = Input([[3.0, math.nan, 1.0, -math.inf, 2.0], [math.nan, 0.0, math.nan, 5.0, math.inf]],
                "f64")
    ties = Input([[3, 1, 3, I64_MAX, 1, -2**63], [0, 0, 0, 2, 2, 1]], "i64")
    for label, x in [("f64/nan", nan), ("i64/ties", ties)]:
        for descending in (False, True):
            cases.add(f"sort/{label}_{descending}", "sort", [Input(x.base, x.dtype, grad=False)],
                      lambda x, desc=descending: [np.take_along_axis(
                          x, stable_order(x, 1, desc), 1), stable_order(x, 1, desc)],
                      params={"dim": 1, "descending": descending})

    def reverse_cumsum(g, d):
        return np.flip(np.cumsum(np.flip(g, d), d), d)
    for label, base, dtype, view, dim in [
            ("f64/dim1", cases.normal(3, 4), "f64", [], 1),
            ("f32/dim0_transpose", cases.normal(4, 3), "f32", [("transpose", 0, 1)], 0),
            ("f64/3d_dim-1_slice", cases.normal(2, 3, 8), "f64", [("slice", 2, 1, 8, 2)], -1)]:
        cases.add(f"cumsum/{label}", "cumsum", [Input(base, dtype, view)],
                  lambda x, d=dim: np.cumsum(x, d),
                  lambda g, x, d=dim: [reverse_cumsum(g, d)], {"dim": dim})
    cases.add("cumsum/i64_wraparound", "cumsum", [Input([[I64_MAX, 1, 5], [-3, 4, 2**62]], "i64")],
              lambda x: np.cumsum(x, 1), params={"dim": 1})
    cases.add("cumsum/bool", "cumsum", [Input([[True, False, True], [True, True, False]], "bool")],
              lambda x: np.cumsum(x, 0, dtype=np.int64), params={"dim": 0})


def build(cases, Input):
    softmax_cases(cases, Input)
    matmul_cases(cases, Input)
    index_cases(cases, Input)
    join_cases(cases, Input)
    sequence_cases(cases, Input)

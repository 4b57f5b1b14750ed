"""Fuzz cases of reductions, matmul, softmax, cumsum, sort/topk, gather/index_select and joins."""
import numpy as np
from hypothesis import strategies as st

import fuzz_reference as ref
from fuzz_case import ACCUMULATED, Case, Loose
from fuzz_reference import RaiseExpected
from fuzz_tensors import DTYPES, tensor_specs

REDUCTIONS = ["sum", "mean", "prod", "max", "min", "argmax", "argmin", "all", "any", "var",
              "std", "norm", "logsumexp"]


def shape_of(spec):
    return spec.numpy_view().shape


def normalized_dim(dim, rank):
    """A dim as kael reads it (a 0-d tensor has dims 0 and -1), or an expected IndexError."""
    bound = max(rank, 1)
    if not -bound <= dim < bound:
        raise RaiseExpected(f"dim {dim} out of range for rank {rank}")
    return None if rank == 0 else dim % rank


def magnitude_scale(x, axis, keepdims=False):
    """The sum of |x| over axis: the error bound of a float sum grows with it."""
    with np.errstate(all="ignore"):
        return np.nansum(np.abs(np.where(np.isinf(x), 0, x)), axis=axis, keepdims=keepdims)


def reduce_reference(op, dim, keepdim, correction):
    def reference(x):
        a = x["a"]
        dtype = ref.name(a.dtype)
        if isinstance(dim, tuple):
            dims = [normalized_dim(d, a.ndim) for d in dim]
            if len(set(dims)) != len(dims):
                raise RaiseExpected("a dim is repeated")
            axis = tuple(d for d in dims if d is not None) if a.ndim else None
        else:
            axis = None if dim is None else normalized_dim(dim, a.ndim)
        keep = keepdim and a.ndim > 0
        floating = dtype in ("float32", "float64")
        wide = ref.computed(dtype) if floating else "int64"
        values = a.astype(wide)
        count = a.size if axis is None else int(np.prod([a.shape[d] for d in np.atleast_1d(axis)]))
        scale = magnitude_scale(values.astype("float64"), axis, keep) if floating else None
        if op in ("max", "min", "argmax", "argmin") and count == 0:
            raise RaiseExpected(f"{op} of an empty tensor")
        if op in ("mean", "var", "std", "norm") and not floating:
            raise RaiseExpected(f"{op} of a non-floating tensor")
        if op == "sum":
            out = np.sum(values, axis=axis, keepdims=keep).astype(dtype if floating else "int64")
        elif op == "mean":
            out = np.mean(values, axis=axis, keepdims=keep).astype(dtype)
            scale = scale / max(count, 1)
        elif op == "prod":
            out = np.prod(values, axis=axis, keepdims=keep).astype(dtype if floating else "int64")
            scale = None if not floating else np.abs(out).astype("float64")
        elif op in ("max", "min"):
            out = (np.max if op == "max" else np.min)(a, axis=axis, keepdims=keep)
        elif op in ("argmax", "argmin"):
            out = np.asarray((np.argmax if op == "argmax" else np.argmin)(
                a if dtype != "bool" else a.astype("int64"), axis=axis, keepdims=keep))
        elif op in ("all", "any"):
            out = np.asarray((np.all if op == "all" else np.any)(a != 0, axis=axis, keepdims=keep))
        elif op in ("var", "std"):
            divisor = max(count - correction, 0)  # 0 gives inf or NaN, as numpy and PyTorch
            mean = np.mean(values, axis=axis, keepdims=True)
            out = np.sum((values - mean) ** 2, axis=axis, keepdims=keep) / np.float64(divisor)
            out = (np.sqrt(out) if op == "std" else out).astype(dtype)
            # Cancellation: the error of a variance grows with sum(x^2); of a std with its root.
            squares = np.sum(values.astype("float64") ** 2, axis=axis, keepdims=keep)
            squares = squares / max(divisor, 1)
            scale = np.sqrt(squares) * 1e4 if op == "std" else squares
        elif op == "norm":
            out = np.sqrt(np.sum(values * values)).astype(dtype)
        else:  # logsumexp
            values = a.astype(ref.computed(ref.floating(dtype)))
            if count == 0:
                out = np.full(np.sum(values, axis=axis, keepdims=keep).shape, -np.inf)
            else:
                top = np.max(values, axis=axis, keepdims=True)
                top = np.where(np.isfinite(top), top, 0)
                out = np.log(np.sum(np.exp(values - top), axis=axis, keepdims=True)) + top
                if not keep:
                    out = out.reshape(()) if axis is None else np.squeeze(out, axis=axis)
            out = out.astype(ref.floating(dtype))
            scale = None
        if dim is None and keepdim and op not in ("norm",):
            out = np.asarray(out).reshape((1,) * a.ndim)
        if scale is not None and np.ndim(scale) == np.ndim(out):
            return Loose(np.asarray(out), np.ones(np.shape(out), bool), np.asarray(scale))
        return np.asarray(out)
    return reference


@st.composite
def reduce_cases(draw):
    op = draw(st.sampled_from(REDUCTIONS))
    a = draw(tensor_specs())
    rank = len(shape_of(a))
    dim_value = st.integers(-rank - 1, rank)
    keepdim = draw(st.booleans())
    correction = draw(st.integers(0, 2))
    if op == "norm":
        dim, call = None, "kael.norm(a)"
    elif op == "logsumexp":
        dim = draw(dim_value)
        call = f"kael.logsumexp(a, dim={dim}, keepdim={keepdim})"
    else:
        choices = [st.none(), dim_value]
        if op in ("sum", "mean"):
            choices.append(st.lists(dim_value, min_size=1, max_size=3).map(tuple))
        dim = draw(st.one_of(*choices))
        extra = f", correction={correction}" if op in ("var", "std") else ""
        call = f"kael.{op}(a, dim={dim!r}, keepdim={keepdim}{extra})"
        if op in ("max", "min") and dim is not None:
            call += ".values"  # with a dim, max and min give (values, indices), as PyTorch
    return Case(op, {"a": a}, f"out = {call}", reduce_reference(op, dim, keepdim, correction),
                ACCUMULATED)


@st.composite
def matmul_cases(draw):
    large = draw(st.integers(0, 9)) == 9  # past the cpu plugin's tile and parallel sizes
    k = draw(st.sampled_from([17, 64, 257]) if large else st.integers(0, 4))

    def operand_shape(left):
        if draw(st.integers(0, 3)) == 0:
            return (k,)
        batch = tuple(draw(st.lists(st.integers(0, 2), max_size=2)))
        other = draw(st.sampled_from([1, 5, 70, 300]) if large else st.integers(0, 3))
        return batch + ((other, k) if left else (k, other))
    a_shape, b_shape = operand_shape(True), operand_shape(False)
    if draw(st.integers(0, 14)) == 14:
        b_shape = b_shape[:-2] + (b_shape[-2] + 1,) + b_shape[-1:] if len(b_shape) > 1 else (k + 1,)
    transposed = draw(st.booleans()) and len(a_shape) >= 2  # a through a transposed view
    if transposed:
        a = draw(tensor_specs(shape=a_shape[:-2] + a_shape[-1:] + a_shape[-2:-1], max_steps=0))
        a.steps = (("transpose", len(a_shape) - 1, len(a_shape) - 2),)
    else:
        a = draw(tensor_specs(shape=a_shape, max_steps=0))
    b = draw(tensor_specs(shape=b_shape, max_steps=0))

    def reference(x):
        dtype = ref.promote(x["a"].dtype, x["b"].dtype)
        if dtype == "bool":
            raise RaiseExpected("matmul of bools")
        left, right = x["a"].astype(ref.computed(dtype)), x["b"].astype(ref.computed(dtype))
        try:
            out = np.matmul(left, right)
        except ValueError:
            raise RaiseExpected("matmul shapes do not match")
        if dtype == "int64":
            return out
        scale = np.matmul(np.abs(np.nan_to_num(left, posinf=0, neginf=0)),
                          np.abs(np.nan_to_num(right, posinf=0, neginf=0)))
        return Loose(out.astype(dtype), np.ones(out.shape, bool), scale)
    stmt = "out = a @ b" if draw(st.booleans()) else "out = kael.matmul(a, b)"
    return Case("matmul", {"a": a, "b": b}, stmt, reference, ACCUMULATED)


def softmax_reference(log, dim):
    def reference(x):
        a = x["a"]
        axis = normalized_dim(dim, a.ndim)
        out_dtype = ref.floating(ref.name(a.dtype))
        values = a.astype("float64")
        if a.ndim == 0:
            values, axis = values.reshape(1), 0
        finite_lanes = np.all(np.isfinite(values), axis=axis, keepdims=True)
        safe = np.where(finite_lanes, values, 0)
        shifted = safe - (np.max(safe, axis=axis, keepdims=True) if safe.size else 0)
        total = np.sum(np.exp(shifted), axis=axis, keepdims=True)
        out = shifted - np.log(total) if log else np.exp(shifted) / total
        care = np.broadcast_to(finite_lanes, out.shape).reshape(a.shape)
        return Loose(out.reshape(a.shape).astype(out_dtype), care)
    return reference


@st.composite
def softmax_cases(draw):
    log = draw(st.booleans())
    a = draw(tensor_specs())
    dim = draw(st.integers(-len(shape_of(a)) - 1, len(shape_of(a))))
    name = "log_softmax" if log else "softmax"
    return Case(name, {"a": a}, f"out = kael.{name}(a, dim={dim})", softmax_reference(log, dim),
                ACCUMULATED)


def sort_order(lanes, axis, descending):
    """Stable sort indices along axis: NaN after every number, first when descending."""
    moved = np.moveaxis(lanes, axis, -1)
    nan = np.isnan(moved) if moved.dtype.kind == "f" else np.zeros(moved.shape, bool)
    if moved.dtype.kind == "f":
        key = np.where(nan, 0, -moved if descending else moved)
    else:  # ~v = -v - 1 orders integers backwards without overflowing at INT64_MIN
        key = moved.astype(np.int64)
        key = ~key if descending else key
    order = np.lexsort((key, ~nan if descending else nan), axis=-1)
    return np.moveaxis(order, -1, axis)


@st.composite
def sequence_cases(draw):
    op = draw(st.sampled_from(["sort", "argsort", "topk", "cumsum"]))
    a = draw(tensor_specs())
    rank = len(shape_of(a))
    dim = draw(st.integers(-rank - 1, rank))
    descending = draw(st.booleans())
    if op == "topk" and rank == 0:
        op = "sort"

    def reference(x):
        array = x["a"]
        axis = normalized_dim(dim, array.ndim)
        lanes = array.reshape(1) if array.ndim == 0 else array
        axis = 0 if axis is None else axis
        if op == "cumsum":
            dtype = ref.name(array.dtype)
            out_dtype = dtype if dtype in ("float32", "float64") else "int64"
            out = np.cumsum(lanes.astype(ref.computed(out_dtype)), axis=axis).astype(out_dtype)
            return out.reshape(array.shape)
        order = sort_order(lanes, axis, descending).astype(np.int64)
        values = np.take_along_axis(lanes, order, axis=axis)
        if op == "topk":
            if not 0 <= k <= lanes.shape[axis]:
                raise RaiseExpected("k out of range")
            values = np.take(values, range(k), axis=axis)
            return [values.reshape(values.shape if array.ndim else ()), values.reshape(
                values.shape if array.ndim else ())]
        if op == "argsort":
            return order.reshape(array.shape)
        return [values.reshape(array.shape), order.reshape(array.shape)]
    if op == "cumsum":
        stmt = f"out = kael.cumsum(a, dim={dim})"
    elif op == "topk":
        k = draw(st.integers(0, 4))
        descending = draw(st.booleans())  # largest
        stmt = (f"values, indices = kael.topk(a, {k}, dim={dim}, largest={descending})\n"
                f"out = (values, a.gather({dim}, indices))")
    else:
        stmt = (f"out = kael.{op}(a, dim={dim}, descending={descending})")
    return Case(op, {"a": a}, stmt, reference, ACCUMULATED)


@st.composite
def index_cases(draw):
    op = draw(st.sampled_from(["gather", "index_select"]))
    a = draw(tensor_specs())
    shape = shape_of(a)
    rank = len(shape)
    dim = draw(st.integers(-rank - 1, rank))
    size = shape[dim] if -rank <= dim < rank else 1
    position = st.integers(0, max(size - 1, 0)) if size else st.just(0)
    if draw(st.integers(0, 9)) == 9:
        position = st.integers(-size - 1, size)  # out of range or negative
    if op == "gather":
        index_shape = tuple(draw(st.integers(0, s)) for s in shape)
    else:
        index_shape = (draw(st.integers(0, 4)),)
    count = int(np.prod(index_shape, dtype=np.int64))
    spec = draw(tensor_specs(dtype="int64", shape=index_shape, max_steps=0))
    if count > 64:  # a seeded generator, not a list hypothesis draws element by element
        low, high = (-size - 1, size + 1) if draw(st.integers(0, 9)) == 9 else (0, max(size, 1))
        spec.recipe = (f"np.random.default_rng({draw(st.integers(0, 2**32 - 1))})"
                       f".integers({low}, {high}, {index_shape})")
        spec.base = eval(spec.recipe, {"np": np})
    else:
        spec.recipe = None
        spec.base = np.array(draw(st.lists(position, min_size=count, max_size=count)),
                             dtype=np.int64).reshape(index_shape)

    def reference(x):
        data, positions = x["a"], x["i"]
        axis = normalized_dim(dim, data.ndim)
        if data.ndim == 0:
            if positions.size and (positions.min() < 0 or positions.max() >= 1):
                raise RaiseExpected("index out of range for a 0-d tensor")
            if op == "index_select":  # PyTorch: one index into a scalar, a 0-d result
                if positions.size != 1:
                    raise RaiseExpected("index_select of a 0-d tensor takes one index")
                return data.copy()
            return np.broadcast_to(data, positions.shape).copy()
        if positions.size and (positions.min() < 0 or positions.max() >= data.shape[axis]):
            raise RaiseExpected("index out of range (negative indices do not wrap here)")
        if op == "index_select":
            return np.take(data, positions, axis=axis).reshape(
                x["a"].shape[:axis] + positions.shape + x["a"].shape[axis + 1:])
        out = np.empty(positions.shape, dtype=data.dtype)
        for at in np.ndindex(positions.shape):
            source = list(at)
            source[axis] = positions[at]
            out[at] = data[tuple(source)]
        return out
    return Case(op, {"a": a, "i": spec}, f"out = kael.{op}(a, {dim}, i)", reference)


@st.composite
def join_cases(draw):
    op = draw(st.sampled_from(["cat", "stack"]))
    first = draw(tensor_specs())
    shape = list(shape_of(first))
    rank = len(shape)
    dim = draw(st.integers(-rank - 2, rank + 1))
    inputs = {"a": first}
    for name in ["b", "c"][: draw(st.integers(0, 2))]:
        other = list(shape)
        if op == "cat" and -rank <= dim < rank:
            other[dim] = draw(st.integers(0, 3))
        if draw(st.integers(0, 14)) == 14:
            other = other + [1]
        inputs[name] = draw(tensor_specs(dtype=draw(st.sampled_from(DTYPES)), shape=other,
                                         max_steps=0))
    names = list(inputs)

    def reference(x):
        arrays = [x[n] for n in names]
        dtype = ref.promote(*(a.dtype for a in arrays))
        arrays = [a.astype(dtype) for a in arrays]
        try:
            if op == "stack":
                return np.stack(arrays, axis=dim)
            if any(a.ndim == 0 for a in arrays):
                raise RaiseExpected("cat of 0-d tensors")
            kept = [a for a in arrays if not (a.ndim == 1 and a.size == 0)]  # skipped, as in torch
            if not kept and not -1 <= dim < 1:
                raise RaiseExpected("cat: dim out of range for 1-d tensors")
            return np.concatenate(kept, axis=dim) if kept else arrays[0]
        except (ValueError, np.AxisError):
            raise RaiseExpected(f"{op}: shapes or dim do not fit")
    return Case(op, inputs, f"out = kael.{op}([{', '.join(names)}], dim={dim})", reference)


STRATEGIES = [reduce_cases(), matmul_cases(), softmax_cases(), sequence_cases(), index_cases(),
              join_cases()]

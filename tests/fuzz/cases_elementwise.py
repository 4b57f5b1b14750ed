"""Fuzz cases of elementwise ops, where, clamp, masked_fill, conversions, indexing reads and
in-place writes through views."""
import numpy as np
from hypothesis import strategies as st

import fuzz_reference as ref
from fuzz_case import EXACT, TRANSCENDENTAL, Alias, Case
from fuzz_reference import RaiseExpected
from fuzz_tensors import DTYPES, broadcastable_shape, tensor_specs, view_step

UNARY = sorted(set(ref.UNARY_FLOAT) | set(ref.UNARY_NUMERIC) | {"neg", "logical_not"})
BINARY = sorted(set(ref.BINARY) | set(ref.COMPARE) | {"logical_and", "logical_or"})
OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "eq": "==",
             "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
SCALARS = st.one_of(st.booleans(), st.integers(-5, 5), st.sampled_from(
    [0.5, -2.5, 0.0, float("nan"), float("inf"), 3.0, 1e-3, 2**40, -(2**53) - 1, 1e300]))


def shape_of(spec):
    return spec.numpy_view().shape


@st.composite
def second_operand(draw, first, dtype=None):
    """A tensor broadcastable with first (occasionally not), a Python scalar, or a view of first's
    own base."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(SCALARS)
    if choice == 1 and first.steps is not None:
        return Alias("a", draw(alias_steps(first.base.shape)))
    shape = broadcastable_shape(draw, shape_of(first))
    if draw(st.integers(0, 19)) == 19:
        shape = tuple(s + 1 for s in shape)  # usually no longer broadcasts
    return draw(tensor_specs(dtype=dtype, shape=shape, max_steps=1))


@st.composite
def alias_steps(draw, shape):
    steps = []
    for i in range(draw(st.integers(0, 2))):
        step = draw(view_step(shape, allow_strided=False))
        shape = apply_shape(shape, step)
        steps.append(step)
    return steps


def apply_shape(shape, step):
    from fuzz_tensors import apply_numpy_step
    return apply_numpy_step(np.zeros(shape), np.zeros(int(np.prod(shape))), step).shape


@st.composite
def unary_cases(draw):
    op = draw(st.sampled_from(UNARY))
    a = draw(tensor_specs())
    call = {"gelu_tanh": "kael.gelu(a, approximate='tanh')"}.get(op)
    if call is None:
        call = f"kael.{op}(a)" if draw(st.booleans()) else f"a.{op}()"
    tol = TRANSCENDENTAL if op in ref.UNARY_FLOAT else EXACT
    return Case(op, {"a": a}, f"out = {call}", lambda x: ref.unary(op, x["a"]), tol)


@st.composite
def binary_cases(draw):
    op = draw(st.sampled_from(BINARY))
    a = draw(tensor_specs())
    b = draw(second_operand(a))
    swap = draw(st.booleans())
    left, right = ("b", "a") if swap else ("a", "b")
    if op in OPERATORS and draw(st.booleans()):
        stmt = f"out = {left} {OPERATORS[op]} {right}"
    else:
        stmt = f"out = kael.{op}({left}, {right})"
    tol = TRANSCENDENTAL if op == "pow" else EXACT
    return Case(op, {"a": a, "b": b}, stmt,
                lambda x: ref.binary(op, x[left], x[right]), tol)


def where_reference(x):
    ref.check_broadcast(x["c"], x["a"], x["b"])
    da, db = ref.operand_dtypes(x["a"], x["b"])
    dtype = ref.result_type(x["a"], x["b"])
    return np.where(x["c"], ref.as_array(x["a"], da).astype(dtype),
                    ref.as_array(x["b"], db).astype(dtype))


@st.composite
def where_cases(draw):
    a = draw(tensor_specs())
    b = draw(second_operand(a))
    c = draw(tensor_specs(dtype="bool", shape=broadcastable_shape(draw, shape_of(a)),
                          max_steps=1))
    return Case("where", {"a": a, "b": b, "c": c}, "out = kael.where(c, a, b)", where_reference)


@st.composite
def clamp_cases(draw):
    a = draw(tensor_specs())
    floating = a.base.dtype.kind == "f"
    bound = st.floats(-5, 5, width=32) if floating else st.integers(-5, 5)
    low, high = draw(st.one_of(st.none(), bound)), draw(st.one_of(st.none(), bound))

    def reference(x):
        if low is not None and high is not None and low > high:
            raise RaiseExpected("clamp low > high")
        if low is None and high is None:
            raise RaiseExpected("clamp without bounds (PyTorch: at least one of min and max)")
        dtype = ref.name(x["a"].dtype)
        out = x["a"].astype("int64" if dtype == "bool" else dtype)
        if low is not None:
            out = np.where(np.isnan(out) if floating else False, out, np.maximum(out, low))
        if high is not None:
            out = np.where(np.isnan(out) if floating else False, out, np.minimum(out, high))
        return out.astype("int64" if dtype == "bool" else dtype)
    return Case("clamp", {"a": a}, f"out = kael.clamp(a, min={low!r}, max={high!r})", reference)


@st.composite
def masked_fill_cases(draw):
    a = draw(tensor_specs())
    mask = draw(tensor_specs(dtype="bool", shape=broadcastable_shape(draw, shape_of(a)),
                             max_steps=1))
    floating = a.base.dtype.kind == "f"
    value = draw(st.floats(-5, 5, width=32) if floating else st.integers(-5, 5))
    in_place = draw(st.booleans())

    def reference(x):
        shape = ref.check_broadcast(x["a"], x["m"])
        filled = np.where(x["m"], ref.convert(np.asarray(value), ref.name(x["a"].dtype)), x["a"])
        if not in_place:
            return filled
        if shape != x["a"].shape:
            raise RaiseExpected("masked_fill_ result does not fit the tensor")
        write_into(x["a"], filled)
        return x["a_base"]
    stmt = ("a.masked_fill_(m, {v!r})\nout = a_base" if in_place
            else "out = a.masked_fill(m, {v!r})").format(v=value)
    return Case("masked_fill_" if in_place else "masked_fill", {"a": a, "m": mask}, stmt,
                reference)


def has_internal_overlap(view):
    """PyTorch's rule: a dim of size > 1 with stride 0, even when another size is 0."""
    return any(st_ == 0 and n > 1 for st_, n in zip(view.strides, view.shape))


def write_into(view, values):
    """view[...] = values as PyTorch writes: an output with internal overlap is an error; a
    partial overlap with an input reads the inputs first (values is already a copy)."""
    if has_internal_overlap(view):
        raise RaiseExpected("write into an expanded tensor (internal overlap)")
    view[...] = values


def unsafe_cast(source, target):
    return ref.KIND[source] > ref.KIND[target]


@st.composite
def in_place_cases(draw):
    """a op= b, copy_, fill_, zero_ and t[key] = v, on views, b possibly aliasing a's base."""
    a = draw(tensor_specs())
    kind = draw(st.sampled_from(["+=", "-=", "*=", "/=", "copy_", "fill_", "zero_"]))
    b = draw(SCALARS) if kind == "fill_" else draw(second_operand(a))
    if kind == "zero_":
        stmt = "a.zero_()"
    elif kind in ("copy_", "fill_"):
        stmt = f"a.{kind}(b)"
    else:
        stmt = f"a {kind} b"

    def reference(x):
        target = x["a"]
        dtype = ref.name(target.dtype)
        if kind == "zero_":
            values = np.zeros(target.shape, dtype)
        elif kind in ("copy_", "fill_"):
            if ref.check_broadcast(x["b"], target) != target.shape:
                raise RaiseExpected("source does not broadcast to the target")
            if kind == "fill_" and isinstance(x["b"], float) and dtype == "int64" and \
                    not -2.0**63 <= x["b"] < 2.0**63:
                raise RaiseExpected("a float scalar int64 cannot hold (PyTorch's overflow error)")
            source = x["b"] if isinstance(x["b"], np.ndarray) else np.asarray(
                x["b"], ref.scalar_dtype(x["b"], dtype))
            values = ref.convert(np.array(source), dtype)
        else:
            op = {"+=": "add", "-=": "sub", "*=": "mul", "/=": "div"}[kind[0] + "="]
            result = ref.binary(op, target, x["b"])
            if result.shape != target.shape:
                raise RaiseExpected("result does not fit the in-place target")
            if unsafe_cast(ref.name(result.dtype), dtype):
                raise RaiseExpected(f"result type {result.dtype} can't be cast to {dtype}")
            values = result.astype(dtype)
        write_into(target, values)
        return x["a_base"]
    return Case("in_place " + kind, {"a": a, "b": b}, stmt + "\nout = a_base", reference)


def reshape_reference(array, shape):
    try:
        return array.reshape(shape)
    except ValueError:  # -1 among zero sizes: as in PyTorch, no size can be inferred
        raise RaiseExpected(f"cannot reshape {array.shape} to {shape}")


@st.composite
def conversion_cases(draw):
    a = draw(tensor_specs())
    kind = draw(st.sampled_from(["contiguous", "clone", "to", "reshape", "flatten", "squeeze",
                                 "tolist", "item", "transfer"]))
    if kind == "to":
        dtype = draw(st.sampled_from(DTYPES))
        kael_dtype = {"bool": "bool_"}.get(dtype, dtype)
        return Case("to", {"a": a}, f"out = a.to(kael.{kael_dtype})",
                    lambda x: ref.convert(x["a"], dtype))
    if kind == "reshape":
        shape = list(shape_of(a))
        if shape and draw(st.booleans()):
            shape = [-1] + shape[1:]
        shape = draw(st.permutations(shape))
        return Case("reshape", {"a": a}, f"out = a.reshape({', '.join(map(str, shape))})",
                    lambda x: reshape_reference(x["a"], shape))
    if kind == "transfer":  # to the other device and back: a copy of the view's elements
        return Case(kind, {"a": a}, "out = a.to(OTHER_DEVICE).to(DEVICE)", lambda x: x["a"].copy())
    if kind == "squeeze":
        return Case("squeeze", {"a": a}, "out = a.squeeze()", lambda x: np.squeeze(x["a"]))
    if kind == "tolist":
        return Case("tolist", {"a": a}, "out = np.array(repr(a.tolist()))",
                    lambda x: np.array(repr(x["a"].tolist())))

    def item_reference(x):
        if x["a"].size != 1:
            raise RaiseExpected("item of a tensor without exactly one element")
        return x["a"].reshape(())
    if kind == "item":
        return Case("item", {"a": a}, "out = np.array(a.item(), dtype=a.numpy().dtype)",
                    item_reference)
    if kind == "flatten":
        return Case(kind, {"a": a}, "out = a.flatten()", lambda x: x["a"].reshape(-1))
    return Case(kind, {"a": a}, f"out = a.{kind}()", lambda x: x["a"].copy())


@st.composite
def basic_keys(draw, shape):
    """A numpy/PyTorch basic index: ints, slices (steps may be negative), None and Ellipsis."""
    items = []
    for size in shape[: draw(st.integers(0, len(shape)))]:
        choice = draw(st.integers(0, 4))
        if choice == 0 and size > 0:
            items.append(draw(st.integers(-size, size - 1)))
        elif choice == 1:
            items.append(None)
        else:
            start = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-size - 1, size + 1)))
            step = draw(st.sampled_from([None, 1, 2, 3, -1]))
            items.append(slice(start, stop, step))
    if draw(st.integers(0, 3)) == 0:
        items.insert(draw(st.integers(0, len(items))), Ellipsis)
    return tuple(items)


def key_code(key):
    def item(k):
        if k is Ellipsis:
            return "..."
        if isinstance(k, slice):
            return ":".join("" if v is None else str(v) for v in (k.start, k.stop, k.step))
        return repr(k)
    return ", ".join(item(k) for k in key) + ("," if len(key) == 1 else "")


def key_reference(key):
    def reference(x):
        if any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in key):
            raise RaiseExpected("kael views have no negative strides")  # kael's documented rule
        # A trailing Ellipsis changes nothing but makes numpy give a view, never a scalar.
        try:
            return x["a"][key if Ellipsis in key else key + (Ellipsis,)]
        except IndexError as error:  # basic indexing errors are the same in numpy and PyTorch
            raise RaiseExpected(f"numpy: {error}")
    return reference


@st.composite
def indexing_cases(draw):
    a = draw(tensor_specs())
    shape = shape_of(a)
    key = draw(basic_keys(shape))
    choice = draw(st.integers(0, 5))
    if choice == 0:  # a bool mask of the tensor's shape: the selected elements, in order
        mask = draw(tensor_specs(dtype="bool", shape=shape, max_steps=1))
        def mask_reference(x):  # numpy's rule: a mask of any leading shape
            if x["m"].shape != x["a"].shape[:x["m"].ndim]:  # numpy lets some empty ones through
                raise RaiseExpected("mask shape differs from the tensor's leading shape")
            return x["a"][x["m"]]
        return Case("getitem mask", {"a": a, "m": mask}, "out = a[m]", mask_reference)
    if choice == 1 and shape:  # an index list along the first dim
        positions = draw(st.lists(st.integers(0, max(shape[0] - 1, 0)), max_size=4))

        def list_reference(x):
            if positions and shape[0] == 0:
                raise RaiseExpected("index into an empty dim")
            return x["a"][positions]
        return Case("getitem list", {"a": a}, f"out = a[{positions!r}]", list_reference)
    if choice < 4:
        return Case("getitem", {"a": a}, f"out = a[{key_code(key) or '...'}]", key_reference(key))
    value = draw(SCALARS)

    def reference(x):
        view = key_reference(key)(x)
        dtype = ref.name(x["a"].dtype)
        write_into(view, ref.convert(np.asarray(value, ref.scalar_dtype(value, dtype)), dtype))
        return x["a_base"]
    return Case("setitem", {"a": a}, f"a[{key_code(key) or '...'}] = {value!r}\nout = a_base",
                reference)


STRATEGIES = [unary_cases(), binary_cases(), where_cases(), clamp_cases(), masked_fill_cases(),
              in_place_cases(), conversion_cases(), indexing_cases()]

"""Fuzz cases of the classes issue 29 found: shapes whose element count overflows (or is empty
with huge dims, printed in no time), float scalars written into int64 and bool tensors, NaN in
order statistics (kthvalue and searchsorted put it last), std's gradient at zero deviation, and
cross_entropy's ignored rows whose logits are not finite (a fully masked position)."""
import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from fuzz_case import ACCUMULATED, EXACT, Case
from fuzz_reference import RaiseExpected

INT64_MAX = 2**63 - 1
SIZES = st.one_of(st.integers(0, 4), st.sampled_from([2**31, 2**32 + 1, 2**61, 2**62, 2**63 - 1]))


def element_count(shape):
    """PyTorch's rule: sizes multiply in order as unsigned 64-bit numbers; None on overflow."""
    count = 1
    for size in shape:
        count *= size
        if count >= 2**64:
            return None
    return count if count <= INT64_MAX else None


@st.composite
def huge_shape_cases(draw):
    shape = tuple(draw(st.lists(SIZES, min_size=1, max_size=4)))
    make = draw(st.sampled_from(["kael.zeros({s}, device=DEVICE)",
                                 "kael.zeros(0, device=DEVICE).view({s})",
                                 "kael.ones(1, device=DEVICE).reshape(*[1] * {n}).expand({s})",
                                 "kael.randn({s}, device=DEVICE)"]))

    count = element_count(shape)
    # Allocations that would succeed but take gigabytes are not this case's business.
    assume(count is None or count <= 2**20 or "view" in make or "expand" in make)

    def reference(_):
        if count is None:
            raise RaiseExpected("the element count overflows int64")
        if "view" in make and count != 0:
            raise RaiseExpected("view of 0 elements as a non-empty shape")
        return np.array([count, len(shape)], dtype=np.int64)

    stmt = ("t = " + make.format(s=shape, n=len(shape)) +
            "\nassert repr(t)  # printing never materialises what it does not show"
            "\nout = kael.tensor([t.numel(), t.dim()])")
    return Case("shape", {}, stmt, reference, EXACT)


@st.composite
def scalar_write_cases(draw):
    value = draw(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                           st.sampled_from([1e20, -1e20, 2.0**63, -(2.0**63), 0.5, -2.7])))
    dtype = draw(st.sampled_from(["int64", "bool_"]))
    write = draw(st.sampled_from(["kael.full((3,), {v!r}, dtype=kael.{d}, device=DEVICE)",
                                  "kael.zeros(3, dtype=kael.{d}, device=DEVICE).fill_({v!r})",
                                  "kael.zeros(3, dtype=kael.{d}, device=DEVICE).masked_fill("
                                  "kael.tensor([True, False, True], device=DEVICE), {v!r})"]))

    def reference(_):
        if dtype == "bool_":
            written = value != 0  # NaN too, as PyTorch
            return np.array([written, False, written] if "masked" in write else [written] * 3)
        if not -(2.0**63) <= value < 2.0**63:
            raise RaiseExpected("int64 cannot hold the value")
        written = int(value)
        return np.array([written, 0, written] if "masked" in write else [written] * 3,
                        dtype=np.int64)

    stmt = "out = " + write.format(v=value, d=dtype).replace("nan", "float('nan')").replace(
        "inf", "float('inf')")
    return Case("scalar write", {}, stmt, reference, EXACT)


@st.composite
def order_statistic_cases(draw):
    length = draw(st.integers(1, 9))
    values = draw(st.lists(st.sampled_from([float("nan"), -1.0, 0.0, 1.0, 2.5]), min_size=length,
                           max_size=length))
    k = draw(st.integers(1, length))
    query = draw(st.sampled_from([float("nan"), -2.0, 1.0, 3.0]))
    right = draw(st.booleans())
    data = np.array(values)

    def reference(_):
        ordered = np.sort(data)  # NaNs last
        finite = np.sort(data[~np.isnan(data)])
        if np.isnan(query):
            position = len(finite) + (int(np.isnan(data).sum()) if right else 0)
        else:
            position = int(np.searchsorted(finite, query, side="right" if right else "left"))
        return [np.array(ordered[k - 1]), np.array(position, dtype=np.int64)]

    stmt = (f"x = kael.tensor({values!r}, dtype=kael.float64, device=DEVICE)\n"
            f"s = kael.sort(x).values\n"
            f"q = kael.tensor({query!r}, dtype=kael.float64, device=DEVICE)\n"
            f"out = (kael.kthvalue(x, {k}).values, kael.searchsorted(s, q, right={right}))")
    return Case("order statistics", {}, stmt.replace("nan", "float('nan')"), reference, EXACT)


@st.composite
def zero_deviation_cases(draw):
    rows, columns = draw(st.integers(1, 4)), draw(st.integers(2, 5))
    # Whole numbers: a constant row's mean is exact, so its deviation is exactly 0 everywhere.
    values = draw(st.lists(st.integers(-100, 100), min_size=rows * columns,
                           max_size=rows * columns))
    array = np.array(values, dtype=np.float64).reshape(rows, columns)
    constant_rows = draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
    for row, constant in enumerate(constant_rows):
        if constant:
            array[row] = array[row, 0]

    def reference(_):
        n = array.shape[1]
        centered = array - array.mean(axis=1, keepdims=True)
        deviation = np.sqrt((centered ** 2).sum(axis=1, keepdims=True) / (n - 1))
        with np.errstate(all="ignore"):
            grad = np.where(deviation == 0, 0.0, centered / (deviation * (n - 1)))
        return grad

    stmt = (f"x = kael.tensor({array.tolist()!r}, dtype=kael.float64, device=DEVICE,"
            " requires_grad=True)\nx.std(dim=1).sum().backward()\nout = x.grad")
    return Case("std backward", {}, stmt.replace("nan", "float('nan')").replace(
        "inf", "float('inf')"), reference, ACCUMULATED)


@st.composite
def ignored_row_cases(draw):
    rows, classes = draw(st.integers(1, 5)), draw(st.integers(1, 4))
    logits = np.array(draw(st.lists(st.integers(-4, 4), min_size=rows * classes,
                                    max_size=rows * classes)), dtype=np.float64)
    logits = logits.reshape(rows, classes)
    targets = np.array(draw(st.lists(st.integers(0, classes - 1), min_size=rows, max_size=rows)))
    ignored = np.array(draw(st.lists(st.booleans(), min_size=rows, max_size=rows)))
    for row in np.flatnonzero(ignored):  # an ignored row may hold anything, -inf, inf or nan
        logits[row] = draw(st.sampled_from([-np.inf, np.inf, np.nan]))
        targets[row] = -100
    reduction = draw(st.sampled_from(["mean", "sum", "none"]))

    def reference(_):
        kept = ~ignored
        shifted = logits[kept] - logits[kept].max(axis=1, keepdims=True)
        picked = shifted[np.arange(int(kept.sum())), targets[kept]]
        losses = np.zeros(rows)
        losses[kept] = np.log(np.exp(shifted).sum(axis=1)) - picked
        if reduction == "none":
            return [losses]
        total = losses.sum()
        with np.errstate(all="ignore"):  # every row ignored: PyTorch's mean is nan (0 / 0)
            return [np.array(total / kept.sum() if reduction == "mean" else total)]

    stmt = (f"x = kael.tensor({logits.tolist()!r}, dtype=kael.float64, device=DEVICE)\n"
            f"t = kael.tensor({targets.tolist()!r}, dtype=kael.int64, device=DEVICE)\n"
            f"out = kael.nn.functional.cross_entropy(x, t, reduction={reduction!r})")
    return Case("cross_entropy ignored rows", {}, stmt.replace("nan", "float('nan')").replace(
        "inf", "float('inf')"), reference, ACCUMULATED)


STRATEGIES = [huge_shape_cases(), scalar_write_cases(), order_statistic_cases(),
              zero_deviation_cases(), ignored_row_cases()]

"""numpy references for the op fuzzer, following kael's documented dtype rules (core/src/ops_*.cpp,
kael/ops.h): promotion bool < int64 < float32 < float64, Python scalars are "weak" (they
take the tensor's dtype unless of a higher kind), 0-d tensors too (torch.result_type), integer inputs of floating functions give
float32. float32 references are computed in float64 and rounded once, so they are the correctly
rounded answer kael's kernels must come close to."""
import math

import numpy as np

RANK = {"bool": 0, "int64": 1, "float32": 2, "float64": 3}
KIND = {"bool": 0, "int64": 1, "float32": 2, "float64": 2}


class Expect:
    """The reference's verdict when kael must raise: a typed Python error, never a crash."""

    def __init__(self, reason):
        self.reason = reason

    def __repr__(self):
        return f"Expect(error: {self.reason})"


class RaiseExpected(Exception):
    pass


def name(dtype):
    return np.dtype(dtype).name


def promote(*dtypes):
    return max((name(d) for d in dtypes), key=RANK.get)


def floating(dtype):
    return dtype if dtype in ("float32", "float64") else "float32"


def scalar_dtype(value, like):
    """kael's scalar_for: a Python number joins like's dtype unless it is of a higher kind."""
    kind = 0 if isinstance(value, bool) else 1 if isinstance(value, int) else 2
    if kind <= KIND[like]:
        return like
    return ("bool", "int64", "float32")[kind]


def as_array(value, dtype):
    return np.asarray(value).astype(dtype)


def operand_dtypes(a, b):
    """(dtype of a, dtype of b) after scalars are given their dtype."""
    if not isinstance(a, np.ndarray):
        return scalar_dtype(a, name(b.dtype)), name(b.dtype)
    if not isinstance(b, np.ndarray):
        return name(a.dtype), scalar_dtype(b, name(a.dtype))
    return name(a.dtype), name(b.dtype)


def result_type(a, b):
    """torch.result_type over operands (arrays or Python numbers, which become 0-d operands of
    operand_dtypes' dtype): dimensioned operands decide unless a 0-d one is of a higher kind."""
    da, db = operand_dtypes(a, b)
    a_zero, b_zero = np.ndim(a) == 0, np.ndim(b) == 0
    if a_zero == b_zero:
        return promote(da, db)
    dimensioned, zero_dim = (db, da) if a_zero else (da, db)
    return zero_dim if KIND[zero_dim] > KIND[dimensioned] else dimensioned


def computed(dtype):
    """The dtype a reference computes in: float32 goes through float64 and is rounded once."""
    return "float64" if dtype == "float32" else dtype


def check_broadcast(*arrays):
    try:
        return np.broadcast_shapes(*(np.shape(a) for a in arrays))
    except ValueError:
        raise RaiseExpected("shapes do not broadcast")


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum,
}
COMPARE = {
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
    "ge": np.greater_equal,
}


def binary(op, a, b):
    da, db = operand_dtypes(a, b)
    check_broadcast(a, b)
    dtype = result_type(a, b)
    if op == "div":
        dtype = floating(dtype)
    if op == "sub" and da == db == "bool":
        raise RaiseExpected("sub of two bools")
    if op == "pow" and dtype == "bool":
        raise RaiseExpected("pow of bools")
    # Each operand is first what kael makes of it (a scalar 1e300 joining int64 is a float32 inf).
    x = as_array(a, da).astype(dtype).astype(computed(dtype))
    y = as_array(b, db).astype(dtype).astype(computed(dtype))
    if op == "pow" and dtype == "int64":
        if (y < 0).any():
            raise RaiseExpected("integer to a negative integer power")
        result = np.ones(np.broadcast_shapes(x.shape, y.shape), dtype=np.int64)
        base, exponent = np.broadcast_arrays(x, y)
        for index in np.ndindex(result.shape):  # numpy's int power is the same wrapping product
            result[index] = wrapping_power(int(base[index]), int(exponent[index]))
        return result
    if op in COMPARE:
        return COMPARE[op](x, y)
    if op in ("logical_and", "logical_or"):
        return (np.logical_and if op == "logical_and" else np.logical_or)(x != 0, y != 0)
    return BINARY[op](x, y).astype(dtype)


def wrapping_power(base, exponent):
    """base ** exponent modulo 2^64, as a signed int64 (kael and numpy both wrap)."""
    result = pow(base, exponent, 2**64)
    return result - 2**64 if result >= 2**63 else result


def gelu_exact(x):
    return np.vectorize(lambda v: 0.5 * v * math.erfc(-v / math.sqrt(2.0)), otypes=[x.dtype])(x) \
        if x.size else x.copy()


UNARY_FLOAT = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "reciprocal": lambda x: 1 / x, "gelu": gelu_exact,
    "gelu_tanh": lambda x: 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3))),
}
UNARY_NUMERIC = {
    "abs": np.abs, "sign": np.sign, "square": np.square, "relu": lambda x: np.where(
        np.isnan(x), x, np.maximum(x, 0)) if x.dtype.kind == "f" else np.maximum(x, 0),
}


def unary(op, a):
    dtype = name(a.dtype)
    with np.errstate(all="ignore"):
        if op == "logical_not":
            return a == 0
        if op == "neg":
            if dtype == "bool":
                raise RaiseExpected("neg of bool")
            return np.negative(a)
        if op in UNARY_FLOAT:
            out = floating(dtype)
            return UNARY_FLOAT[op](a.astype(computed(out))).astype(out)
        out = "int64" if dtype == "bool" else dtype
        if op == "abs" and dtype == "bool":
            return a.astype(out)
        return UNARY_NUMERIC[op](a.astype(out)).astype(out)


def saturating_int64(x):
    """kael's float to int64: NaN gives 0, values beyond the range saturate, others truncate."""
    x = x.astype(np.float64)
    out = np.zeros(x.shape, dtype=np.int64)
    finite = ~np.isnan(x)
    high, low = x >= 2.0**63, x <= -(2.0**63)
    middle = finite & ~high & ~low
    out[middle] = np.trunc(x[middle]).astype(np.int64)
    out[high] = np.iinfo(np.int64).max
    out[low] = np.iinfo(np.int64).min
    return out


def convert(a, dtype):
    if dtype == "int64" and a.dtype.kind == "f":
        return saturating_int64(a)
    if dtype == "bool":
        return a != 0
    return a.astype(dtype)

"""The numeric elementwise ops: rounding, the division family, classification, more math,
silu and bitwise ops, against numpy (gradients by hand)."""

import math

import numpy as np

from reference_cases import I64_MAX, I64_MIN, SPECIALS, domain

erf = np.vectorize(math.erf, otypes=[np.float64])
erfc = np.vectorize(math.erfc, otypes=[np.float64])
TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def zero(x):
    return np.zeros_like(x)


# name: (forward, derivative, domain); the rounding ones on 3x the normal spread
UNARY = {
    "floor": (np.floor, zero, "wide"),
    "ceil": (np.ceil, zero, "wide"),
    "round": (np.rint, zero, "wide"),
    "trunc": (np.trunc, zero, "wide"),
    "frac": (lambda x: x - np.trunc(x), np.ones_like, "wide"),
    "log1p": (np.log1p, lambda x: 1 / (1 + x), "positive"),
    "expm1": (np.expm1, np.exp, "normal"),
    "erf": (erf, lambda x: TWO_OVER_SQRT_PI * np.exp(-x * x), "normal"),
    "erfc": (erfc, lambda x: -TWO_OVER_SQRT_PI * np.exp(-x * x), "normal"),
    "log2": (np.log2, lambda x: 1 / (x * math.log(2)), "positive"),
    "log10": (np.log10, lambda x: 1 / (x * math.log(10)), "positive"),
    "exp2": (np.exp2, lambda x: np.exp2(x) * math.log(2), "normal"),
    "silu": (lambda x: x * sigmoid(x), lambda x: sigmoid(x) * (1 + x * (1 - sigmoid(x))),
             "normal"),
}
CLASSIFY = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
            "isposinf": np.isposinf, "isneginf": np.isneginf}
# Halfway cases: ties go to even.
HALVES = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.49999, -0.0, 1e16 + 2, 4503599627370497.0]


def unary_cases(cases, Input):
    for name, (forward, derivative, kind) in UNARY.items():
        def backward(g, x, derivative=derivative):
            return [g * derivative(x)]
        def make(*shape, kind=kind):
            return 3 * cases.normal(*shape) if kind == "wide" else domain(cases, kind, *shape)
        layouts = [("f64", "plain", (3, 4), []),
                   ("f32", "transpose", (4, 3), [("transpose", 0, 1)]),
                   ("f64", "slice", (3, 9), [("slice", 1, 1, 9, 2)])]
        for dtype, label, shape, view in layouts:
            cases.add(f"{name}/{dtype}/{label}", name, [Input(make(*shape), dtype, view)],
                      forward, backward)
        cases.add(f"{name}/f64/specials", name, [Input(SPECIALS, "f64", grad=False)], forward)
    for name in ("floor", "ceil", "round", "trunc", "frac"):
        cases.add(f"{name}/f64/halves", name, [Input(HALVES, "f64", grad=False)],
                  UNARY[name][0])
        cases.add(f"{name}/f32/halves", name, [Input(HALVES, "f32", grad=False)],
                  UNARY[name][0])
    ints = [0, 5, -7, I64_MAX, I64_MIN, 1]
    for name in ("floor", "ceil", "round", "trunc"):
        cases.add(f"{name}/i64", name, [Input(ints, "i64")], lambda x: x)
    for name, forward in CLASSIFY.items():
        cases.add(f"{name}/f64/specials", name, [Input(SPECIALS, "f64", grad=False)], forward)
        cases.add(f"{name}/f32/specials", name, [Input(SPECIALS, "f32", grad=False)], forward)
        cases.add(f"{name}/i64", name, [Input(ints, "i64")], forward)


def division_cases(cases, Input):
    family = {
        "fmod": (np.fmod, lambda g, a, b: [g, -g * np.trunc(a / b)]),
        "remainder": (np.remainder, lambda g, a, b: [g, -g * np.floor(a / b)]),
        "floor_divide": (np.floor_divide, None),
    }
    for name, (forward, backward) in family.items():
        a = Input(5 * cases.normal(3, 4), "f64")
        b = Input(cases.away0(4, margin=0.5), "f64")
        cases.add(f"{name}/f64/broadcast", name, [a, b], forward, backward)
        a = Input(5 * cases.normal(4, 3), "f32", [("transpose", 0, 1)])
        b = Input(cases.away0(3, 4, margin=0.5), "f32")
        cases.add(f"{name}/f32/transpose", name, [a, b], forward, backward)
        dividends = [5.0, -5.0, 7.5, -7.5, 0.0, -0.0, 1.0, math.inf, math.nan, 1e300, 6.0, -6.0]
        divisors = [3.0, 3.0, -2.0, 2.0, 2.0, -2.0, 0.0, 3.0, 1.0, 1e-300, math.inf, -math.inf]
        cases.add(f"{name}/f64/specials", name,
                  [Input(dividends, "f64", grad=False), Input(divisors, "f64", grad=False)],
                  forward)
        dividends = [5, -5, 7, -7, 0, 13, I64_MIN, I64_MAX, 9, -9]
        divisors = [3, 3, -2, -2, 5, 4, -1, 7, 0, 0]
        cases.add(f"{name}/i64", name, [Input(dividends, "i64"), Input(divisors, "i64")], forward)


def bitwise_cases(cases, Input):
    a = [12, -1, 5, 0, 2**62, I64_MIN, I64_MAX, 7]
    b = [10, 3, -6, 0, 2**62, -1, 1, 7]
    for name, forward in [("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                          ("bitwise_xor", np.bitwise_xor)]:
        cases.add(f"{name}/i64", name, [Input(a, "i64"), Input(b, "i64")], forward)
        cases.add(f"{name}/bool", name, [Input([True, True, False, False], "bool"),
                                         Input([True, False, True, False], "bool")], forward)
    cases.add("bitwise_not/i64", "bitwise_not", [Input(a, "i64")], np.invert)
    cases.add("bitwise_not/bool", "bitwise_not", [Input([True, False], "bool")], np.invert)
    counts = [0, 1, 2, 63, 20, 62, 5, 33]
    cases.add("bitwise_left_shift/i64", "bitwise_left_shift",
              [Input(a, "i64"), Input(counts, "i64")], np.left_shift)
    cases.add("bitwise_right_shift/i64", "bitwise_right_shift",
              [Input(a, "i64"), Input(counts, "i64")], np.right_shift)


def build(cases, Input):
    unary_cases(cases, Input)
    division_cases(cases, Input)
    bitwise_cases(cases, Input)

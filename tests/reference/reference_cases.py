"""The cases of reference_data.json: numpy forward results and hand-written gradients.

build(cases, Input) adds every case; a backward function gets the weight w (d loss / d output)
and the viewed inputs and returns one gradient per input (None for those without one), in any
shape that broadcasts to the input (the generator sums it down).
"""

import math

import numpy as np

erf = np.vectorize(math.erf, otypes=[np.float64])
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
I64_MAX = 2**63 - 1
I64_MIN = -2**63
SPECIALS = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e300, -1e300, -1.0, 2.0, 1e-310, 710.0,
            -710.0]


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def gelu_tanh_parts(x):
    t = np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3))
    return t, 0.5 * x * (1 + t)


def gelu_tanh_grad(x):
    t, _ = gelu_tanh_parts(x)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)


def gelu_exact(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_exact_grad(x):
    return 0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


# name: (op, params, forward, derivative, domain)
UNARY = {
    "neg": ("neg", {}, np.negative, lambda x: -np.ones_like(x), "normal"),
    "abs": ("abs", {}, np.abs, np.sign, "away0"),
    "sign": ("sign", {}, np.sign, np.zeros_like, "away0"),
    "exp": ("exp", {}, np.exp, np.exp, "normal"),
    "log": ("log", {}, np.log, lambda x: 1 / x, "positive"),
    "sqrt": ("sqrt", {}, np.sqrt, lambda x: 0.5 / np.sqrt(x), "positive"),
    "rsqrt": ("rsqrt", {}, lambda x: 1 / np.sqrt(x), lambda x: -0.5 * x**-1.5, "positive"),
    "sin": ("sin", {}, np.sin, np.cos, "normal"),
    "cos": ("cos", {}, np.cos, lambda x: -np.sin(x), "normal"),
    "tanh": ("tanh", {}, np.tanh, lambda x: 1 - np.tanh(x)**2, "normal"),
    "sigmoid": ("sigmoid", {}, sigmoid, lambda x: sigmoid(x) * (1 - sigmoid(x)), "normal"),
    "relu": ("relu", {}, lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0, "away0"),
    "gelu": ("gelu", {"approximate": "none"}, gelu_exact, gelu_exact_grad, "normal"),
    "gelu_tanh": ("gelu", {"approximate": "tanh"}, lambda x: gelu_tanh_parts(x)[1],
                  gelu_tanh_grad, "normal"),
    "square": ("square", {}, np.square, lambda x: 2 * x, "normal"),
    "reciprocal": ("reciprocal", {}, lambda x: 1 / x, lambda x: -1 / (x * x), "away0"),
}

BINARY = {
    "add": (np.add, lambda g, a, b: [g, g]),
    "sub": (np.subtract, lambda g, a, b: [g, -g]),
    "mul": (np.multiply, lambda g, a, b: [g * b, g * a]),
    "div": (np.divide, lambda g, a, b: [g / b, -g * a / (b * b)]),
    "pow": (np.power, lambda g, a, b: [g * b * a**(b - 1), g * a**b * np.log(a)]),
    "maximum": (np.maximum, lambda g, a, b: [g * (a > b), g * (a < b)]),
    "minimum": (np.minimum, lambda g, a, b: [g * (a < b), g * (a > b)]),
}


def domain(cases, kind, *shape):
    if kind == "positive":
        return cases.positive(*shape)
    if kind == "away0":
        return cases.away0(*shape)
    return cases.normal(*shape)


def unary_cases(cases, Input):
    for name, (op, params, forward, derivative, kind) in UNARY.items():
        def backward(g, x, derivative=derivative):
            return [g * derivative(x)]
        layouts = [("f64", "plain", (3, 4), []),
                   ("f32", "transpose", (4, 3), [("transpose", 0, 1)]),
                   ("f64", "slice", (3, 9), [("slice", 1, 1, 9, 2)]),
                   ("f32", "expand", (1, 4), [("expand", [3, 4])])]
        for dtype, label, shape, view in layouts:
            x = Input(domain(cases, kind, *shape), dtype, view)
            cases.add(f"{name}/{dtype}/{label}", op, [x], forward, backward, params)
        if name not in ("gelu", "gelu_tanh"):
            cases.add(f"{name}/f64/specials", op, [Input(SPECIALS, "f64", grad=False)], forward,
                      params=params)
    ints = [0, 5, -7, I64_MAX, I64_MIN, 3037000500, -3037000500, 1]
    for op, forward in [("neg", np.negative), ("abs", np.abs), ("sign", np.sign),
                        ("square", np.square), ("relu", lambda x: np.maximum(x, 0)),
                        ("exp", lambda x: np.exp(x.astype(np.float64))),
                        ("sqrt", lambda x: np.sqrt(x.astype(np.float64)))]:
        values = ints if op not in ("exp", "sqrt") else [0, 4, 9, 2, 1, 10, 7, 3]
        cases.add(f"{op}/i64", op, [Input(values, "i64")], forward)
    x = Input([True, False, False, True], "bool")
    cases.add("logical_not/bool", "logical_not", [x], np.logical_not)
    cases.add("logical_not/f64", "logical_not", [Input(SPECIALS, "f64")], np.logical_not)
    cases.add("logical_not/i64", "logical_not", [Input(ints, "i64")], np.logical_not)


def binary_cases(cases, Input):
    for op, (forward, backward) in BINARY.items():
        def make(*shape, first, op=op):
            if op == "pow":
                return cases.positive(*shape, low=0.5, high=2.0) if first else cases.normal(*shape)
            if op == "div" and not first:
                return cases.away0(*shape, margin=0.5)
            return cases.normal(*shape)
        layouts = [
            ("f64/plain", [((3, 4), "f64", []), ((3, 4), "f64", [])]),
            ("f32/broadcast", [((3, 1), "f32", []), ((4,), "f32", [])]),
            ("f64/views", [((4, 3), "f64", [("transpose", 0, 1)]),
                           ((3, 8), "f64", [("slice", 1, 0, 8, 2)])]),
            ("f32/expand_permute", [((2, 1, 4), "f32", [("expand", [2, 3, 4])]),
                                    ((4, 3, 2), "f32", [("permute", [2, 1, 0])])]),
            ("mixed/f32_f64", [((3, 4), "f32", []), ((4,), "f64", [])]),
            ("mixed/f64_f32", [((4,), "f64", []), ((4, 3), "f32", [("transpose", 0, 1)])]),
            ("f64/scalar_tensor", [((), "f64", []), ((2, 3), "f64", [("transpose", 0, 1)])]),
        ]
        for label, specs in layouts:
            inputs = [Input(make(*shape, first=k == 0), dtype, view)
                      for k, (shape, dtype, view) in enumerate(specs)]
            cases.add(f"{op}/{label}", op, inputs, forward, backward)
    a = [math.nan, 1.0, math.inf, math.inf, 0.0, -0.0, 1.0, -8.0, 0.0, math.nan, 2.0, 1e308]
    b = [1.0, math.nan, -math.inf, math.inf, 0.0, 0.0, 0.0, 1 / 3, -1.0, 0.0, 1030.0, 10.0]
    for op, (forward, _) in BINARY.items():
        cases.add(f"{op}/f64/specials", op, [Input(a, "f64"), Input(b, "f64")], forward)
    tie = [1.0, 2.0, -3.0, 0.5]
    cases.add("maximum/f64/ties_forward", "maximum",
              [Input(tie, "f64", grad=False), Input([1.0, 1.0, -3.0, 0.5], "f64", grad=False)],
              np.maximum)
    cases.add("pow/f64/negative_base", "pow",
              [Input(cases.away0(3, 4), "f64"), Input(np.arange(12.0).reshape(3, 4) % 4 - 1,
                                                       "f64", grad=False)],
              np.power, lambda g, a, b: [g * b * a**(b - 1), None])
    wide = [2**62, I64_MAX, I64_MIN, 5, -7, 3, 3037000500, -1, 0, 12]
    other = [2**62, 1, -1, -3, 2, 0, 3037000500, I64_MIN, 7, -5]
    for op, forward in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                        ("maximum", np.maximum), ("minimum", np.minimum),
                        ("div", lambda p, q: p.astype(np.float64) / q.astype(np.float64))]:
        cases.add(f"{op}/i64/wraparound", op, [Input(wide, "i64"), Input(other, "i64")], forward)
    bases = [2, -3, 3, 0, 1, -1, 7, 10, 2, -2]
    exponents = [62, 5, 41, 0, 100, 3, 0, 19, 64, 63]
    cases.add("pow/i64/wraparound", "pow", [Input(bases, "i64"), Input(exponents, "i64")],
              np.power)
    p, q = [True, True, False, False], [True, False, True, False]
    cases.add("add/bool", "add", [Input(p, "bool"), Input(q, "bool")], np.logical_or)
    cases.add("mul/bool", "mul", [Input(p, "bool"), Input(q, "bool")], np.logical_and)
    cases.add("add/bool_i64", "add", [Input(p, "bool"), Input([5, -2, 7, I64_MAX], "i64")],
              lambda x, y: x.astype(np.int64) + y)
    cases.add("mul/i64_f32", "mul", [Input([[3], [-2]], "i64"), Input(cases.normal(3), "f32")],
              np.multiply, lambda g, x, y: [None, g * x])


def scalar_cases(cases, Input):
    specs = [
        ("add_scalar", lambda x, s: x + s, lambda g, s: g),
        ("sub_scalar", lambda x, s: x - s, lambda g, s: g),
        ("mul_scalar", lambda x, s: x * s, lambda g, s: g * s),
        ("div_scalar", lambda x, s: x / s, lambda g, s: g / s),
        ("scalar_add", lambda x, s: s + x, lambda g, s: g),
        ("scalar_mul", lambda x, s: s * x, lambda g, s: g * s),
    ]
    for op, forward, derivative in specs:
        def fwd(x, forward=forward):
            return forward(x, 2.5)
        def bwd(g, x, derivative=derivative):
            return [derivative(g, 2.5)]
        cases.add(f"{op}/f64", op, [Input(cases.normal(3, 4), "f64")], fwd, bwd, {"scalar": 2.5})
        cases.add(f"{op}/f32/transpose", op,
                  [Input(cases.normal(4, 3), "f32", [("transpose", 0, 1)])], fwd, bwd,
                  {"scalar": 2.5})
        ints = Input([[1, -4, 7], [I64_MAX, 0, -9]], "i64")
        cases.add(f"{op}/i64_int", op, [ints], lambda x, forward=forward: forward(x, 3),
                  params={"scalar": 3})
        cases.add(f"{op}/i64_fraction", op, [ints], lambda x, forward=forward: forward(x, 0.5),
                  params={"scalar": 0.5})


def selection_cases(cases, Input):
    condition = cases.rng.random((3, 4)) < 0.5
    cases.add("where/f64", "where", [Input(condition, "bool"), Input(cases.normal(3, 4), "f64"),
                                     Input(cases.normal(4), "f64")],
              np.where, lambda g, c, a, b: [None, g * c, g * ~c])
    cases.add("where/f32/views", "where",
              [Input(condition[:, :1], "bool"),
               Input(cases.normal(4, 3), "f32", [("transpose", 0, 1)]),
               Input(cases.normal(3, 8), "f32", [("slice", 1, 1, 8, 2)])],
              np.where, lambda g, c, a, b: [None, g * c, g * ~c])
    cases.add("where/mixed", "where", [Input(condition, "bool"), Input(cases.normal(3, 4), "f32"),
                                       Input(cases.normal(1), "f64")],
              np.where, lambda g, c, a, b: [None, g * c, g * ~c])
    cases.add("where/i64", "where", [Input(condition, "bool"),
                                     Input(np.arange(12).reshape(3, 4), "i64"),
                                     Input([I64_MIN], "i64")], np.where)

    def clear_of(x, points):
        for point in points:
            x = np.where(np.abs(x - point) < 0.02, x + 0.1, x)
        return x
    low, high = -0.5, 0.75
    params = {"low": low, "high": high}
    clamp = lambda x: np.clip(x, low, high)  # noqa: E731
    clamp_grad = lambda g, x: [g * ((x >= low) & (x <= high))]  # noqa: E731
    cases.add("clamp/f64", "clamp", [Input(clear_of(cases.normal(3, 5), [low, high]), "f64")],
              clamp, clamp_grad, params)
    cases.add("clamp/f32/transpose", "clamp",
              [Input(clear_of(cases.normal(5, 3), [low, high]), "f32", [("transpose", 0, 1)])],
              clamp, clamp_grad, params)
    cases.add("clamp/f64/specials", "clamp", [Input(SPECIALS, "f64")], clamp, params=params)
    cases.add("clamp/i64", "clamp", [Input([-5, -2, 0, 3, 4, I64_MAX, I64_MIN], "i64")],
              lambda x: np.clip(x, -2, 3), params={"low": -2.5, "high": 3.5})

    mask = cases.rng.random((3, 4)) < 0.4
    fill = lambda a, m: np.where(m, -1.5, a)  # noqa: E731
    fill_grad = lambda g, a, m: [g * ~m, None]  # noqa: E731
    cases.add("masked_fill/f64", "masked_fill",
              [Input(cases.normal(3, 4), "f64"), Input(mask, "bool")], fill, fill_grad,
              {"value": -1.5})
    cases.add("masked_fill/f32/broadcast", "masked_fill",
              [Input(cases.normal(4, 3), "f32", [("transpose", 0, 1)]), Input(mask[0], "bool")],
              fill, fill_grad, {"value": -1.5})
    cases.add("masked_fill/f64/broadcast_input", "masked_fill",
              [Input(cases.normal(4), "f64"), Input(mask, "bool")], fill, fill_grad,
              {"value": -1.5})
    cases.add("masked_fill/i64", "masked_fill",
              [Input(np.arange(12).reshape(3, 4) * 3 - 7, "i64"), Input(mask, "bool")],
              lambda a, m: np.where(m, 7, a), params={"value": 7.0})


def comparison_cases(cases, Input):
    pick = lambda *shape: cases.rng.choice([-1.0, 0.0, 0.5, 1.0], size=shape)  # noqa: E731
    layouts = [
        ("f64/ties", [Input(pick(3, 4), "f64"), Input(pick(3, 4), "f64")]),
        ("f32/broadcast", [Input(pick(3, 1), "f32"), Input(pick(4, 3), "f32",
                                                           [("transpose", 0, 1)])]),
        ("mixed/f32_f64", [Input([0.1, 0.5, 1 / 3, -2.0], "f32"),
                           Input([0.1, 0.5, 1 / 3, -2.0], "f64")]),
        ("f64/nan", [Input([math.nan, 1.0, math.inf, -0.0], "f64"),
                     Input([math.nan, math.nan, math.inf, 0.0], "f64")]),
        ("i64/wide", [Input([2**62 + 1, I64_MAX, I64_MIN, 3], "i64"),
                      Input([2**62, I64_MAX - 1, I64_MIN, 3], "i64")]),
        ("bool", [Input([True, True, False, False], "bool"),
                  Input([True, False, True, False], "bool")]),
    ]
    for op, forward in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                        ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                        ("logical_and", np.logical_and), ("logical_or", np.logical_or)]:
        for label, inputs in layouts:
            cases.add(f"{op}/{label}", op, inputs, forward)


def build(cases, Input):
    import reference_cases_nn_sequence  # pylint: disable=import-outside-toplevel

    unary_cases(cases, Input)
    binary_cases(cases, Input)
    scalar_cases(cases, Input)
    selection_cases(cases, Input)
    comparison_cases(cases, Input)
    reference_cases_nn_sequence.build(cases, Input)

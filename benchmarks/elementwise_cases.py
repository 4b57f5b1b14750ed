"""Elementwise cases generated from kael's op rows (kael/op_rows.h, read through
kael._kael._op_rows()) and the binary arithmetic functions, each on a contiguous operand, a
transposed one and (binary) against a broadcast row; the arithmetic functions also against the
operand's amax keeping each dim position of reduce_cases' cube (x - x.amax((0, 2), keepdim=True)
keeps the middle dim), contiguous and transposed: an op is timed by being listed, as the
reductions are (reduce_cases.py). Used by model_path_cases.op_cases."""
import math

import reduce_cases

# Binary functions that are not op rows yet; the op rows' families follow them.
ARITHMETIC = ("add", "sub", "mul", "div", "pow", "maximum", "minimum")
UNARY_FAMILIES = ("float_math", "numeric", "rounding", "classify")
BINARY_FAMILIES = ("comparison",)
# Their operand is |x| + 0.5: negatives would give NaN, which no user times.
POSITIVE = frozenset({"log", "sqrt", "rsqrt", "log1p", "log2", "log10", "pow"})


def op_names():
    """(unary, binary) function names, from the op rows of the kael being measured."""
    import kael  # pylint: disable=import-outside-toplevel (imported by the caller first)
    rows = kael._kael._op_rows()  # pylint: disable=protected-access
    unary = [name for family in UNARY_FAMILIES for name in rows[family]]
    binary = [name for family in BINARY_FAMILIES for name in rows[family]] + list(ARITHMETIC)
    return unary, binary


def operand(lib, dev, name, side, transposed):
    x = lib.randn(side, side, device=dev)
    if name in POSITIVE:
        x = x.abs() + 0.5
    return x.t() if transposed else x


def elementwise_cases(case_type, scale, sized):
    side = max(2, math.isqrt(sized(1 << 20, scale)))
    unary, binary = op_names()
    cases = []
    for name in unary:
        for layout in ("", ", transposed"):
            def setup(lib, dev, name=name, layout=layout):
                x = operand(lib, dev, name, side, bool(layout))
                function = getattr(lib, name)
                return lambda: function(x)
            cases.append(case_type(f"elementwise {name}, {side}x{side}{layout}", setup, setup))
    for name in binary:
        for layout in ("", ", transposed", " + row"):
            def setup(lib, dev, name=name, layout=layout):
                x = operand(lib, dev, name, side, layout == ", transposed")
                y = lib.randn(side, side, device=dev)
                y = y[0] if layout == " + row" else y
                function = getattr(lib, name)
                return lambda: function(x, y)
            cases.append(case_type(f"elementwise {name}, {side}x{side}{layout}", setup, setup))
    cases += kept_dim_cases(case_type, scale, sized)
    return cases


def kept_dim_cases(case_type, scale, sized):
    """Every arithmetic function of x and a [1, 128, 1]-like operand (x's amax over the other
    dims, kept), for each dim position, x contiguous or transposed: the broadcast operand repeats
    along the innermost run or strides across it."""
    cube = (sized(512, scale), 128, 128)
    cases = []
    for name in ARITHMETIC:
        for where, dims in (("the first dim", (1, 2)), ("a middle dim", (0, 2)),
                            ("the last dim", (0, 1))):
            for transposed in (False, True):
                def setup(lib, dev, name=name, dims=dims, transposed=transposed):
                    values = "near-one" if name in POSITIVE else "randn"
                    x = reduce_cases.operand(lib, dev, cube, values, transposed)
                    kept = x.amax(dim=dims, keepdim=True)
                    function = getattr(lib, name)
                    return lambda: function(x, kept)
                layout = ", transposed" if transposed else ""
                cases.append(case_type(
                    f"elementwise {name}, {'x'.join(map(str, cube))} and its amax keeping "
                    f"{where}{layout}", setup, setup))
    return cases

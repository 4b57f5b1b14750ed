"""Reduction and activation cases generated from op lists, so that a reduction or a dim position
is timed by being listed here and nothing escapes by not being named: every op of REDUCTIONS x
every dim position it takes (first, middle, last, several, whole) x contiguous or transposed, on
a [N, 128, 128] tensor, plus the first and last dim of a large matrix; every activation of
ACTIVATIONS at 2^21 and 2^26 (scaled) elements. Used by model_path_cases.op_cases."""
import dataclasses
from typing import Callable

# Positions of a 3-d tensor: dims (None: the whole tensor), and a name for the table.
POSITIONS = (("the first dim", 0), ("a middle dim", 1), ("the last dim", 2),
             ("dims (0, 2)", (0, 2)), ("the whole tensor", None))


@dataclasses.dataclass(frozen=True)
class Reduction:
    name: str
    call: Callable  # (lib, x, dims) -> result; dims is an int, a tuple or None
    several: bool = True   # takes a tuple of dims (as torch 1.13 does)
    whole: bool = True     # takes no dim
    values: str = "randn"  # randn, bool (x > 0) or near-one (for products)


REDUCTIONS = (
    Reduction("sum", lambda l, x, d: x.sum() if d is None else x.sum(dim=d)),
    Reduction("mean", lambda l, x, d: x.mean() if d is None else x.mean(dim=d)),
    Reduction("prod", lambda l, x, d: x.prod() if d is None else x.prod(dim=d), several=False,
              values="near-one"),
    Reduction("amax", lambda l, x, d: x.amax() if d is None else x.amax(dim=d)),
    Reduction("amin", lambda l, x, d: x.amin() if d is None else x.amin(dim=d)),
    Reduction("max with indices", lambda l, x, d: x.max(dim=d), several=False, whole=False),
    Reduction("min with indices", lambda l, x, d: x.min(dim=d), several=False, whole=False),
    Reduction("argmax", lambda l, x, d: x.argmax() if d is None else x.argmax(dim=d),
              several=False),
    Reduction("argmin", lambda l, x, d: x.argmin() if d is None else x.argmin(dim=d),
              several=False),
    Reduction("var", lambda l, x, d: x.var() if d is None else x.var(dim=d)),
    Reduction("std", lambda l, x, d: x.std() if d is None else x.std(dim=d)),
    Reduction("norm", lambda l, x, d: x.norm() if d is None else x.norm(dim=d)),
    Reduction("logsumexp", lambda l, x, d: l.logsumexp(x, dim=d), whole=False),
    Reduction("any", lambda l, x, d: x.any() if d is None else x.any(dim=d), several=False,
              values="bool"),
    Reduction("all", lambda l, x, d: x.all() if d is None else x.all(dim=d), several=False,
              values="bool"),
    # One dim each; "the whole tensor" is the flattened tensor as one row.
    Reduction("cumsum", lambda l, x, d: l.cumsum(x.reshape(-1), dim=0) if d is None
              else l.cumsum(x, dim=d), several=False),
    Reduction("cumprod", lambda l, x, d: l.cumprod(x.reshape(-1), dim=0) if d is None
              else l.cumprod(x, dim=d), several=False, values="near-one"),
)

# Every activation kael.nn.functional has (softplus, elu and leaky_relu are not in kael yet).
ACTIVATIONS = (
    ("relu", lambda l, x: l.relu(x)),
    ("sigmoid", lambda l, x: l.sigmoid(x)),
    ("tanh", lambda l, x: l.tanh(x)),
    ("gelu (exact)", lambda l, x: l.nn.functional.gelu(x)),
    ("gelu (tanh)", lambda l, x: l.nn.functional.gelu(x, approximate="tanh")),
    ("silu", lambda l, x: l.nn.functional.silu(x)),
    ("exp", lambda l, x: l.exp(x)),
)


def operand(lib, dev, shape, values, transposed, dtype=None):
    """A tensor of shape (the logical shape of the timed operand) with the reduction's values;
    transposed: a view of the last two dims of a contiguous tensor, so no dim has stride 1 where
    the contiguous case has it; dtype: the name of a float dtype to store them in (float32 if
    None)."""
    stored = list(shape)
    if transposed:
        stored[-1], stored[-2] = stored[-2], stored[-1]
    x = lib.randn(*stored, device=dev)
    if values == "bool":
        x = x > 0
    elif values == "near-one":
        x = x * 0.01 + 1
    if dtype is not None:
        x = x.to(getattr(lib, dtype))
    return x.transpose(-1, -2) if transposed else x


def reduction_case(case_type, reduction, shape, where, dims, transposed, dtype=None):
    layout = ", transposed" if transposed else ""
    stored = f", {dtype}" if dtype else ""
    name = (f"{reduction.name} over {where}, {'x'.join(map(str, shape))}{layout}{stored}")

    def setup(lib, dev):
        x = operand(lib, dev, shape, reduction.values, transposed, dtype)
        return lambda: reduction.call(lib, x, dims)
    return case_type(name, setup, setup)


def positions(reduction):
    """(name, dims) of every position of POSITIONS that the reduction takes."""
    for where, dims in POSITIONS:
        if (isinstance(dims, tuple) and not reduction.several) or (
                dims is None and not reduction.whole):
            continue
        yield where, dims


def reduction_cases(case_type, scale, sized):
    cube = (sized(512, scale), 128, 128)
    matrix = (sized(8192, scale), 8192)
    cases = []
    for reduction in REDUCTIONS:
        for where, dims in positions(reduction):
            for transposed in (False, True):
                cases.append(reduction_case(case_type, reduction, cube, where, dims, transposed))
        for where, dims in (("the first dim", 0), ("the last dim", 1)):
            cases.append(reduction_case(case_type, reduction, matrix, where, dims, False))
    cases.append(reduction_case(case_type, REDUCTIONS[0], (1024,), "the whole tensor", None,
                                False))
    return cases


def low_precision_reduction_cases(case_type, scale, sized):
    """Every float reduction of bfloat16 at every position of the cube, contiguous or transposed
    (the GPU benchmark's: the cpu's bf16 reductions are low_precision_vs_torch.py's)."""
    cube = (sized(512, scale), 128, 128)
    return [reduction_case(case_type, reduction, cube, where, dims, transposed, "bfloat16")
            for reduction in REDUCTIONS if reduction.values != "bool"
            for where, dims in positions(reduction) for transposed in (False, True)]


def activation_cases(case_type, scale, sized):
    cases = []
    for count in sorted({1 << 21, sized(1 << 26, scale)}):
        for name, call in ACTIVATIONS:
            def setup(lib, dev, call=call, count=count):
                x = lib.randn(count, device=dev)
                return lambda: call(lib, x)
            cases.append(case_type(f"{name}, {count} elements", setup, setup))
    return cases

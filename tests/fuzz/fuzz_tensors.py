"""Random tensors for the op fuzzer: a numpy base array (f32, f64, i64, bool; sizes 0 and 1
favoured) and a chain of views on it (transpose, permute, slice with steps, select, unsqueeze,
expand, as_strided), built the same way on numpy and on every kael device."""
import numpy as np
from hypothesis import strategies as st

DTYPES = ("float32", "float64", "int64", "bool")
NUMPY_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}
SPECIAL_FLOATS = (0.0, -0.0, 1.0, -1.0, float("nan"), float("inf"), float("-inf"), 1e30, -1e-30)
WIDE_INTS = (0, 1, -1, 2**31, -(2**31), 2**62, -(2**63), 2**63 - 1)


LARGE_ELEMENTS = 64  # bases with more elements come from a seeded numpy generator


def random_values(seed, dtype, shape, specials):
    """A large base: uniform values from a seeded generator, some replaced by special ones."""
    rng = np.random.default_rng(seed)
    count = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        values = rng.integers(0, 2, count).astype(np.bool_)
    elif dtype == "int64":
        values = rng.integers(-20, 21, count)
    else:
        values = rng.uniform(-10, 10, count).astype(NUMPY_DTYPES[dtype])
        if specials:
            where = rng.integers(0, count, max(1, count // 50))
            values[where] = rng.choice(np.array(SPECIAL_FLOATS, dtype=values.dtype), where.size)
    return values.reshape(shape)


class TensorSpec:
    """A base array plus the view steps applied to it; repr is the Python that builds it."""

    def __init__(self, base, steps, recipe=None):
        self.base = base
        self.steps = tuple(steps)
        self.recipe = recipe  # the random_values arguments of a large base

    def numpy_view(self, base=None):
        array = self.base.copy() if base is None else base
        flat = array.reshape(-1)
        for step in self.steps:
            array = apply_numpy_step(array, flat, step)
        return array

    def kael_view(self, kael, device):
        base = kael.tensor(self.base, device=device)
        return base, apply_kael_steps(base, self.steps)

    def code(self, name):
        data = repr(self.base.reshape(-1).tolist())
        dtype = {"bool": "bool_"}.get(self.base.dtype.name, self.base.dtype.name)
        values = f"np.array({data}, dtype=np.{dtype}).reshape({self.base.shape})"
        if isinstance(self.recipe, str):
            values = self.recipe
        elif self.recipe is not None:
            values = f"fuzz_tensors.random_values{self.recipe!r}"
        return (f"{name}_base = kael.tensor({values}, device=DEVICE)\n"
                f"{name} = {name}_base{''.join(step_code(step) for step in self.steps)}")

    def __repr__(self):
        return self.code("t")


def step_code(step):
    kind, args = step[0], step[1:]
    if kind == "permute":
        return f".permute(*{args[0]!r})"
    if kind == "expand":
        return f".expand(*{args[0]!r})"
    if kind == "as_strided":
        return f".as_strided({list(args[0])!r}, {list(args[1])!r}, {args[2]!r})"
    return f".{kind}({', '.join(repr(a) for a in args)})"


def apply_kael_steps(tensor, steps):
    for step in steps:
        kind, args = step[0], step[1:]
        if kind == "permute":
            tensor = tensor.permute(*args[0])
        elif kind == "expand":
            tensor = tensor.expand(*args[0])
        elif kind == "as_strided":
            tensor = tensor.as_strided(list(args[0]), list(args[1]), args[2])
        else:
            tensor = getattr(tensor, kind)(*args)
    return tensor


def apply_numpy_step(array, flat, step):
    """numpy's view for one step; every result stays a writable view of the base."""
    kind, args = step[0], step[1:]
    if kind == "transpose":
        return np.swapaxes(array, args[0], args[1])
    if kind == "permute":
        return np.transpose(array, args[0])
    if kind == "slice":
        dim, start, stop, step_ = args
        return array[(slice(None),) * dim + (slice(start, stop, step_),)]
    if kind == "select":
        dim, index = args
        return array[(slice(None),) * dim + (index, Ellipsis)]  # a 0-d view, not a scalar
    if kind == "unsqueeze":
        return np.expand_dims(array, args[0])
    if kind == "expand":
        sizes = args[0]
        lead = len(sizes) - array.ndim
        strides = [0] * lead + [0 if array.shape[i] == 1 and sizes[lead + i] != 1 else
                                array.strides[i] for i in range(array.ndim)]
        return np.lib.stride_tricks.as_strided(array, sizes, strides)
    if kind == "as_strided":
        sizes, strides, offset = args
        item = flat.itemsize
        return np.lib.stride_tricks.as_strided(flat[offset:],
                                               sizes, [s * item for s in strides])
    raise AssertionError(kind)


def small_sizes(max_rank=4, max_size=5):
    size = st.one_of(st.sampled_from([0, 1, 1, 2]), st.integers(0, max_size))
    return st.lists(size, min_size=0, max_size=max_rank).map(tuple)


# Past the cpu plugin's block (4096) and parallel (2^15, 2^16 elements) thresholds.
LARGE_SHAPES = st.sampled_from([(5000,), (70000,), (300, 230), (3, 4100), (4100, 3), (2, 3, 11000),
                                (1, 65537), (129, 1, 513)])


@st.composite
def base_arrays(draw, dtype=None, shape=None, positive=False):
    dtype = dtype or draw(st.sampled_from(DTYPES))
    if shape is None:
        shape = draw(LARGE_SHAPES) if draw(st.integers(0, 29)) == 29 else draw(small_sizes())
    shape = tuple(shape)
    count = int(np.prod(shape, dtype=np.int64))
    if count > LARGE_ELEMENTS:
        recipe = (draw(st.integers(0, 2**32 - 1)), dtype, shape, draw(st.booleans()))
        values = random_values(*recipe)
        if positive and dtype != "bool":
            values = np.abs(values)
        return values, recipe
    if dtype == "bool":
        values = draw(st.lists(st.booleans(), min_size=count, max_size=count))
    elif dtype == "int64":
        element = st.integers(-20, 20) if positive is False else st.integers(0, 20)
        if draw(st.integers(0, 9)) == 9 and not positive:
            element = st.one_of(element, st.sampled_from(WIDE_INTS))
        values = draw(st.lists(element, min_size=count, max_size=count))
    else:
        width = 32 if dtype == "float32" else 64
        finite = st.floats(-10 if not positive else 0, 10, width=width)
        element = finite
        if draw(st.integers(0, 4)) == 4:
            element = st.one_of(finite, st.sampled_from(SPECIAL_FLOATS))
        values = draw(st.lists(element, min_size=count, max_size=count))
    return np.array(values, dtype=NUMPY_DTYPES[dtype]).reshape(shape), None


@st.composite
def view_step(draw, shape, allow_strided):
    rank = len(shape)
    kinds = ["unsqueeze", "expand"]
    if rank >= 2:
        kinds += ["transpose", "permute"]
    if rank >= 1:
        kinds += ["slice", "select"] if any(shape) else ["slice"]
    if allow_strided:
        kinds.append("as_strided")
    kind = draw(st.sampled_from(kinds))
    if kind == "transpose":
        return ("transpose", draw(st.integers(0, rank - 1)), draw(st.integers(0, rank - 1)))
    if kind == "permute":
        return ("permute", tuple(draw(st.permutations(range(rank)))))
    if kind == "unsqueeze":
        return ("unsqueeze", draw(st.integers(-rank - 1, rank)))
    if kind == "slice":
        dim = draw(st.integers(0, rank - 1))
        start = draw(st.integers(0, shape[dim]))
        stop = draw(st.integers(start, shape[dim]))
        return ("slice", dim, start, stop, draw(st.integers(1, 3)))
    if kind == "select":
        dim = draw(st.sampled_from([d for d in range(rank) if shape[d] > 0]))
        return ("select", dim, draw(st.integers(-shape[dim], shape[dim] - 1)))
    if kind == "expand":
        lead = draw(st.lists(st.integers(0, 3), max_size=max(0, 3 - rank)))
        sizes = [draw(st.integers(0, 3)) if s == 1 else s for s in shape]
        return ("expand", tuple(lead + sizes))
    return draw(strided_step(int(np.prod(shape, dtype=np.int64))))


@st.composite
def strided_step(draw, storage):
    """as_strided on the contiguous base: every element within [0, storage)."""
    rank = draw(st.integers(0, 3))
    sizes = [draw(st.integers(0, 4)) for _ in range(rank)]
    strides = [draw(st.integers(0, 4)) for _ in range(rank)]
    span = sum((n - 1) * s for n, s in zip(sizes, strides)) if 0 not in sizes else 0
    if 0 in sizes:
        offset = draw(st.integers(0, storage))
    elif storage - 1 - span < 0:
        sizes, strides, offset = [], [], 0  # a 0-d view of element 0 (storage is non-empty)
        if storage == 0:
            sizes, strides = [0], [1]
    else:
        offset = draw(st.integers(0, storage - 1 - span))
    return ("as_strided", tuple(sizes), tuple(strides), offset)


@st.composite
def tensor_specs(draw, dtype=None, shape=None, max_steps=3, positive=False):
    base, recipe = draw(base_arrays(dtype=dtype, shape=shape, positive=positive))
    steps = []
    array = base
    if base.size > LARGE_ELEMENTS and shape is not None:
        max_steps = 0  # a large operand shaped to broadcast: views could make the result huge
    for i in range(draw(st.integers(0, max_steps))):
        step = draw(view_step(array.shape, allow_strided=(i == 0)))
        array = apply_numpy_step(array, base.reshape(-1), step)
        steps.append(step)
    return TensorSpec(base, steps, recipe)


def broadcastable_shape(draw, shape):
    """A shape that broadcasts with shape: leading dims dropped, some sizes set to 1."""
    keep = draw(st.integers(0, len(shape)))
    tail = list(shape[len(shape) - keep:])
    return tuple(1 if draw(st.booleans()) else s for s in tail)

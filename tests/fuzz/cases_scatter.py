"""Fuzz cases of scatter_add_: in place on a view, duplicates accumulating, against np.add.at."""
import numpy as np
from hypothesis import strategies as st

import fuzz_reference as ref
from cases_elementwise import write_into
from fuzz_case import ACCUMULATED, Case, Loose
from fuzz_reference import RaiseExpected
from fuzz_tensors import DTYPES, tensor_specs


@st.composite
def scatter_add_cases(draw):
    data = draw(tensor_specs(dtype=draw(st.sampled_from(["float32", "float64", "int64"]))))
    shape = data.numpy_view().shape
    rank = len(shape)
    dim = draw(st.integers(-rank - 1, rank))
    size = shape[dim] if -rank <= dim < rank else 1
    index_shape = tuple(draw(st.integers(0, s)) for s in shape)
    count = int(np.prod(index_shape, dtype=np.int64))
    out_of_range = draw(st.integers(0, 9)) == 9
    position = st.integers(-size - 1, size) if out_of_range else st.integers(0, max(size - 1, 0))
    index = draw(tensor_specs(dtype="int64", shape=index_shape, max_steps=0))
    if count <= 64:
        index.base = np.array(draw(st.lists(position, min_size=count, max_size=count)),
                              dtype=np.int64).reshape(index_shape)
    else:
        index.recipe = (f"np.random.default_rng({draw(st.integers(0, 2**32 - 1))})"
                        f".integers(0, {max(size, 1)}, {index_shape})")
        index.base = eval(index.recipe, {"np": np})
    source_shape = tuple(s + draw(st.integers(0, 1)) for s in index_shape)
    source = draw(tensor_specs(dtype=draw(st.sampled_from(DTYPES)), shape=source_shape,
                               max_steps=1))

    def reference(x):
        target, positions, values = x["a"], x["i"], x["s"]
        axis = 0 if target.ndim == 0 else dim % target.ndim
        if not -max(target.ndim, 1) <= dim < max(target.ndim, 1):
            raise RaiseExpected("dim out of range")
        if positions.ndim != target.ndim or values.ndim != positions.ndim:
            raise RaiseExpected("ranks differ")
        if any(p > v for p, v in zip(positions.shape, values.shape)):
            raise RaiseExpected("index larger than source")
        bound = target.shape[axis] if target.ndim else 1
        if positions.size and (positions.min() < 0 or positions.max() >= bound):
            raise RaiseExpected("index out of range (negative indices do not wrap here)")
        dtype = ref.name(target.dtype)
        result = target.astype(ref.computed(dtype))
        converted = ref.convert(values, dtype).astype(ref.computed(dtype))
        for at in np.ndindex(positions.shape):
            goal = list(at)
            if target.ndim:
                goal[axis] = positions[at]
            result[tuple(goal)] += converted[at]
        write_into(target, result.astype(dtype))
        base = x["a_base"]
        return base if dtype == "int64" else Loose(base, np.ones(base.shape, bool), None)
    return Case("scatter_add_", {"a": data, "i": index, "s": source},
                f"a.scatter_add_({dim}, i, s)\nout = a_base", reference, ACCUMULATED)


STRATEGIES = [scatter_add_cases()]

"""Docstrings of kael's module-level functions, attached at import (as torch/_torch_docs.py does):
each opens with its text signature, so inspect.signature reads it."""
from . import _kael
from ._kael import _add_docstr

_DEFERRED_INDEX = """An index outside the dim is an IndexError naming this op. On cuda, as on any GPU, the device
finds it after the call returns: the error is raised at the next call that waits for the
device (item(), tolist(), numpy(), kael.synchronize()), in whichever thread makes it, and its
message names the thread that issued the op."""


def _doc(name, signature, text):
    function = getattr(_kael, name)
    if function.__text_signature__ is not None:
        raise RuntimeError(f"kael.{name} is documented twice")  # the binding carries one
    _add_docstr(function, f"{signature}\n--\n\n{text.strip()}\n")


_REDUCTIONS = {
    "sum": ("The sum of the elements", "integers and bool sum to int64", "[[1.0, 2.0], [3.0, 4.0]]"),
    "mean": ("The mean of the elements", "floating dtypes only", "[[1.0, 2.0], [3.0, 4.0]]"),
    "prod": ("The product of the elements", "integers and bool multiply to int64",
             "[[1.0, 2.0], [3.0, 4.0]]"),
    "argmax": ("The index of the largest element (the first one on ties, NaN counts as "
               "largest)", "int64 result; over the flattened tensor without dim",
               "[[1.0, 5.0], [3.0, 4.0]]"),
    "argmin": ("The index of the smallest element (the first one on ties)",
               "int64 result; over the flattened tensor without dim", "[[1.0, 5.0], [3.0, 4.0]]"),
    "all": ("True if every element is nonzero", "bool result", "[[True, False], [True, True]]"),
    "any": ("True if some element is nonzero", "bool result", "[[True, False], [False, False]]"),
}
for _name, (_summary, _dtype_note, _values) in _REDUCTIONS.items():
    _doc(_name, f"{_name}(input, dim=None, keepdim=False)", f"""
{_summary}, over all of input or over dim.

Args:
    input (Tensor): any shape, dtype and device ({_dtype_note}).
    dim (int or tuple of ints, optional): the dimensions reduced; None reduces all of them.
    keepdim (bool): keep reduced dimensions with size 1.

Returns a tensor on input's device{", differentiable" if _name in ("sum", "mean", "prod")
else ""}.

Example:

    >>> x = kael.tensor({_values})
    >>> kael.{_name}(x)
    >>> kael.{_name}(x, dim=1)
""")

_FACTORY_ARGS = """    dtype (kael.dtype, optional): float32 by default ({extra}).
    device (str or kael.device, optional): "cpu" by default; "cuda", "cuda:1", ...
    requires_grad (bool): make the result a leaf that records gradients."""
for _name, _summary, _example in [
        ("zeros", "A tensor filled with 0.", "kael.zeros(2, 3)"),
        ("ones", "A tensor filled with 1.", "kael.ones((2, 3), dtype=kael.int64)"),
        ("empty", "A tensor of the given shape whose values are not set (read them only "
         "after writing them).", "kael.empty(2, 3).shape")]:
    _doc(_name, f"{_name}(*size, dtype=None, device=None, requires_grad=False)", f"""
{_summary}

Args:
    *size (ints, or one tuple or list of ints): the shape; () or nothing gives a 0-d tensor.
{_FACTORY_ARGS.format(extra="any dtype")}

Example:

    >>> {_example}
""")

_doc("tensor", "tensor(data, *, dtype=None, device=None, requires_grad=False)", """
A new tensor holding a copy of data.

Args:
    data: a number, a (nested) list or tuple of numbers or tensors, a numpy array, or a tensor.
        The dtype is inferred as PyTorch does: bools give bool, ints int64, floats float32
        (a numpy array keeps its dtype where kael has it: float64 stays float64).
    dtype (kael.dtype, optional), device (str or kael.device, optional), requires_grad (bool).

Example:

    >>> kael.tensor([[1, 2], [3, 4]])
    >>> kael.tensor(2.5, dtype=kael.float64)
""")
_doc("full", "full(size, fill_value, *, dtype=None, device=None, requires_grad=False)", """
A tensor of shape size filled with fill_value.

Args:
    size (tuple or list of ints): the shape.
    fill_value (number): the value; the dtype is inferred from it (bool, int64 or float32)
        unless dtype is given.
    dtype, device, requires_grad: as for kael.zeros.

Example:

    >>> kael.full((2, 2), 7)
""")
_doc("arange", "arange(start, end=None, step=1, *, dtype=None, device=None, "
     "requires_grad=False)", """
The values start, start + step, ... below end (above end for a negative step), as a 1-D tensor;
arange(n) counts 0..n-1.

Args:
    start, end, step (numbers): int64 when all are integers, float32 otherwise (dtype overrides).
    dtype, device, requires_grad: as for kael.zeros.

Example:

    >>> kael.arange(5)
    >>> kael.arange(0, 1, 0.25)
""")
_doc("matmul", "matmul(input, other)", """
The matrix product, with PyTorch's rules: 1-D by 1-D is a dot product, 2-D by 2-D a matrix
product, and leading dimensions of higher-rank operands broadcast as batches.

Args:
    input (Tensor), other (Tensor): f32 or f64 (int64 too), on one device; the inner sizes must
        agree (ValueError naming both shapes otherwise).

Returns a differentiable tensor. Also written input @ other.

Example:

    >>> a = kael.ones(2, 3); b = kael.ones(3, 4)
    >>> kael.matmul(a, b).shape
""")
_doc("where", "where(condition, input, other)", """
input where condition is True, other elsewhere, broadcasting all three.

Args:
    condition (Tensor): bool.
    input, other (Tensor or number): the values; they promote to one dtype.

Returns a tensor differentiable in input and other.

Example:

    >>> x = kael.tensor([-1.0, 2.0, -3.0])
    >>> kael.where(x > 0, x, 0.0)
""")
_doc("clamp", "clamp(input, min=None, max=None)", """
Each element limited to [min, max] (either bound may be None); NaN stays NaN.

Args:
    input (Tensor): any dtype but bool.
    min, max (number, optional): the bounds.

Returns a tensor differentiable where the input lies inside the bounds.

Example:

    >>> kael.clamp(kael.tensor([-2.0, 0.5, 3.0]), min=-1, max=1)
""")
_doc("masked_fill", "masked_fill(input, mask, value)", """
A copy of input with value wherever mask is True (mask broadcasts to input).

Args:
    input (Tensor), mask (Tensor): bool, broadcastable to input, value (number).

Example:

    >>> x = kael.zeros(3)
    >>> kael.masked_fill(x, kael.tensor([True, False, True]), 5.0)
""")
_doc("allclose", "allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False)", """
True if |input - other| <= atol + rtol * |other| everywhere (a Python bool: waits for the device).

Args:
    input (Tensor), other (Tensor): broadcastable, on one device.
    rtol, atol (float): tolerances; equal_nan (bool): NaNs in the same places count as equal.

Example:

    >>> kael.allclose(kael.tensor([1.0, 2.0]), kael.tensor([1.0, 2.0000001]))
""")
_doc("logsumexp", "logsumexp(input, dim, keepdim=False)", """
log(sum(exp(input))) along dim, computed without overflow (the row maximum is taken out first).

Args:
    input (Tensor): f32 or f64; dim (int or tuple of ints: every listed dim is reduced);
    keepdim (bool).

Returns a differentiable tensor.

Example:

    >>> kael.logsumexp(kael.tensor([[0.0, 0.0]]), dim=1)
""")
for _name, _summary in {"softmax": "exp(x) / sum(exp(x))", "log_softmax":
                        "x - logsumexp(x)"}.items():
    _doc(_name, f"{_name}(input, dim)", f"""
{_summary} along dim, computed in one fused kernel per row where the device has it.

Args:
    input (Tensor): f32 or f64, any shape and device; dim (int): the dimension normalised.

Returns a differentiable tensor of input's shape.

Example:

    >>> kael.{_name}(kael.tensor([[1.0, 2.0, 3.0]]), dim=1)
""")
_doc("gelu", "gelu(input, approximate='none')", """
The Gaussian error linear unit x * Phi(x); approximate='tanh' uses GPT-2's tanh form.

Args:
    input (Tensor): f32 or f64; approximate (str): 'none' or 'tanh'.

Returns a differentiable tensor.

Example:

    >>> kael.gelu(kael.tensor([-1.0, 0.0, 1.0]))
""")
_doc("cumsum", "cumsum(input, dim)", """
The running sum along dim: element i is the sum of elements 0..i.

Args:
    input (Tensor): any dtype (integers and bool sum to int64); dim (int).

Returns a differentiable tensor of input's shape.

Example:

    >>> kael.cumsum(kael.tensor([1, 2, 3, 4]), dim=0)
""")
_doc("sort", "sort(input, dim=-1, descending=False)", """
input sorted along dim (stably: equal elements keep their order), as the named tuple
(values, indices).

Args:
    input (Tensor): any dtype; NaN sorts last (first when descending), as PyTorch.
    dim (int), descending (bool).

Example:

    >>> values, indices = kael.sort(kael.tensor([3.0, 1.0, 2.0]))
    >>> values, indices
""")
_doc("argsort", "argsort(input, dim=-1, descending=False)", """
The indices that sort input along dim (stably), int64.

Args:
    input (Tensor), dim (int), descending (bool).

Example:

    >>> kael.argsort(kael.tensor([3.0, 1.0, 2.0]))
""")
_doc("topk", "topk(input, k, dim=-1, largest=True)", """
The k largest (or smallest) elements along dim, as the named tuple (values, indices), sorted.

Args:
    input (Tensor), k (int): 0 <= k <= input.size(dim), dim (int), largest (bool).

Example:

    >>> kael.topk(kael.tensor([1.0, 5.0, 3.0, 4.0]), 2)
""")
for _name, _summary in {"cat": "joined end to end along the existing dimension dim",
                        "stack": "stacked along a new dimension dim"}.items():
    _doc(_name, f"{_name}(tensors, dim=0)", f"""
The tensors {_summary}.

Args:
    tensors (sequence of Tensor): one dtype and device; shapes equal except{
        " along dim" if _name == "cat" else ""}.
    dim (int): the dimension.

Returns a differentiable tensor.

Example:

    >>> a = kael.tensor([1, 2]); b = kael.tensor([3, 4])
    >>> kael.{_name}([a, b])
""")
_doc("split", "split(input, split_size_or_sections, dim=0)", """
Views of input in pieces along dim: of split_size each (the last may be smaller), or of the
given list of sizes.

Args:
    input (Tensor); split_size_or_sections (int or list of ints); dim (int).

Returns a tuple of views.

Example:

    >>> kael.split(kael.arange(5), 2)
""")
_doc("chunk", "chunk(input, chunks, dim=0)", """
input split into at most chunks views of equal size along dim (the last may be smaller).

Args:
    input (Tensor), chunks (int) > 0, dim (int).

Example:

    >>> kael.chunk(kael.arange(6), 3)
""")
_doc("gather", "gather(input, dim, index)", """
out[i][j] = input[index[i][j]][j] for dim 0 (and likewise for other dims): values picked along
dim by an int64 index of input's rank.

Args:
    input (Tensor), dim (int), index (Tensor): int64, each entry in [0, input.size(dim)).

Returns a tensor of index's shape, differentiable in input.

""" + _DEFERRED_INDEX + """

Example:

    >>> x = kael.tensor([[1, 2], [3, 4]])
    >>> kael.gather(x, 1, kael.tensor([[1], [0]]))
""")
_doc("index_select", "index_select(input, dim, index)", """
The slices of input along dim at the positions of a 1-D int64 index.

Args:
    input (Tensor), dim (int), index (Tensor): 1-D int64 in [0, input.size(dim)).

Returns a new, differentiable tensor.

""" + _DEFERRED_INDEX + """

Example:

    >>> kael.index_select(kael.tensor([[1, 2], [3, 4], [5, 6]]), 0, kael.tensor([2, 0]))
""")
for _name, _inplace in {"scatter_add": False, "scatter_add_": True}.items():
    _doc(_name, f"{_name}(input, dim, index, src)", f"""
{"Adds, in place," if _inplace else "A copy of input with"} src's values {
"" if _inplace else "added "}at the positions index gives along dim (duplicates accumulate).

Args:
    input (Tensor), dim (int), index (Tensor): int64 of src's shape, src (Tensor).

{_DEFERRED_INDEX}

Example:

    >>> kael.{_name}(kael.zeros(3), 0, kael.tensor([0, 0, 2]), kael.tensor([1.0, 2.0, 3.0]))
""")

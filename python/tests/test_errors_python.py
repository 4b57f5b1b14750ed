"""Errors raised at the Python boundary: typed (TypeError, OverflowError, ValueError, ...), naming
the op the user called, in Python spellings, never pybind11's C++ text."""
import math

import numpy as np
import pytest

import kael

MAX_RANK = kael._kael._MAX_RANK
INT64_MAX = 2 ** 63 - 1


def raises_clean(exception, call, names=None):
    """call() raises exception; its message names `names` and carries no C++ text."""
    with pytest.raises(exception) as info:
        call()
    message = str(info.value)
    for forbidden in ("Unable to cast", "C++", "std::", "pybind11"):
        assert forbidden not in message, message
    if names is not None:
        assert names in message, message
    return message


def nested(depth, leaf=1.0):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


# Deep nesting: a rank limit instead of unbounded recursion.

def test_deep_nested_list_is_a_value_error(device):
    raises_clean(ValueError, lambda: kael.tensor(nested(100_000), device=device), "tensor")
    raises_clean(ValueError, lambda: kael.tensor(nested(MAX_RANK + 1), device=device), "tensor")
    # An empty innermost list also counts as a dimension.
    raises_clean(ValueError, lambda: kael.tensor(nested(MAX_RANK, []), device=device), "tensor")


def test_self_containing_list_is_a_value_error():
    looped = []
    looped.append(looped)
    raises_clean(ValueError, lambda: kael.tensor(looped), "tensor")


def test_the_deepest_allowed_nesting_round_trips(device):
    t = kael.tensor(nested(MAX_RANK, 2.5), device=device)
    assert t.shape == (1,) * MAX_RANK
    assert t.tolist() == nested(MAX_RANK, 2.5)
    assert repr(t).count("[") == MAX_RANK
    empty_innermost = kael.tensor(nested(MAX_RANK - 1, []), device=device)
    assert empty_innermost.shape == (1,) * (MAX_RANK - 1) + (0,)


def test_view_with_too_many_dimensions_is_a_value_error(device):
    raises_clean(ValueError, lambda: kael.ones(1, device=device).view(*[1] * 100_000).tolist())


# Iteration and len of a 0-d tensor.

def test_iterating_a_zero_dimensional_tensor_is_a_type_error(device):
    scalar = kael.tensor(1.0, device=device)
    raises_clean(TypeError, lambda: list(scalar), "0-d")
    raises_clean(TypeError, lambda: iter(scalar), "0-d")
    raises_clean(TypeError, lambda: len(scalar), "0-d")


def test_iteration_gives_rows(device):
    t = kael.tensor([[1, 2], [3, 4], [5, 6]], device=device)
    rows = list(t)
    assert len(rows) == 3 and all(row.shape == (2,) for row in rows)
    assert [row.tolist() for row in rows] == t.tolist()
    assert [float(v) for v in kael.tensor([0.5, 1.5], device=device)] == [0.5, 1.5]
    assert list(kael.zeros(0, 3, device=device)) == []


# Numbers that do not fit int64: OverflowError naming the op.

def test_numpy_uint64_beyond_int64_is_an_overflow_error(device):
    big = np.uint64(2 ** 64 - 1)
    raises_clean(OverflowError, lambda: kael.tensor(big, device=device), "tensor")
    raises_clean(OverflowError, lambda: kael.tensor([1, big], device=device), "tensor")
    raises_clean(OverflowError, lambda: kael.tensor(np.array([2 ** 63], dtype=np.uint64),
                                                    device=device), "tensor")
    raises_clean(OverflowError, lambda: kael.ones(2, dtype="i64", device=device) + big)
    fits = np.array([0, INT64_MAX], dtype=np.uint64)
    assert kael.tensor(fits, device=device).tolist() == [0, INT64_MAX]
    assert kael.tensor(np.uint64(INT64_MAX), device=device).item() == INT64_MAX


def test_ints_beyond_int64_are_overflow_errors(device):
    ints = kael.zeros(3, dtype="i64", device=device)
    raises_clean(OverflowError, lambda: ints.fill_(2 ** 63), "fill_")
    raises_clean(OverflowError, lambda: kael.tensor([2 ** 63], device=device), "tensor")
    raises_clean(OverflowError, lambda: kael.tensor(-2 ** 63 - 1, device=device), "tensor")
    raises_clean(OverflowError, lambda: ints + 2 ** 63, "add")
    raises_clean(OverflowError, lambda: 2 ** 63 - ints, "sub")
    raises_clean(OverflowError, lambda: kael.add(ints, 2 ** 63), "add")
    raises_clean(OverflowError, lambda: kael.full((2,), 2 ** 63, device=device), "full")
    raises_clean(OverflowError, lambda: kael.masked_fill(ints, ints == 0, 2 ** 64), "masked_fill")
    raises_clean(OverflowError, lambda: ints.masked_fill_(ints == 0, 2 ** 64), "masked_fill_")
    raises_clean(OverflowError, lambda: kael.tensor(10 ** 400, dtype="f64", device=device),
                 "tensor")
    raises_clean(OverflowError, lambda: kael.tensor(10 ** 5000, device=device), "tensor")

    def assign():
        ints[0] = 2 ** 63
    raises_clean(OverflowError, assign)

    def add_in_place():
        target = kael.zeros(2, dtype="i64", device=device)
        target += 2 ** 64
    raises_clean(OverflowError, add_in_place, "+=")
    # The edges of int64 are kept exactly; a float tensor takes a large int as a float.
    assert kael.tensor([-2 ** 63, INT64_MAX], device=device).tolist() == [-2 ** 63, INT64_MAX]
    assert ints.fill_(INT64_MAX).tolist() == [INT64_MAX] * 3
    assert kael.zeros(1, dtype="f64", device=device).fill_(2 ** 70).item() == 2.0 ** 70


def test_huge_sizes_are_overflow_errors():
    raises_clean(OverflowError, lambda: kael.empty(2 ** 64), "empty")
    raises_clean(OverflowError, lambda: kael.zeros((2, 2 ** 70)), "zeros")
    raises_clean(OverflowError, lambda: kael.ones(3).view(2 ** 64), "view")
    raises_clean(OverflowError, lambda: kael.ones(3).sum(dim=2 ** 64), "sum")
    raises_clean(TypeError, lambda: kael.zeros(2.5), "zeros")
    raises_clean(TypeError, lambda: kael.full("ab", 1.0), "full")


def test_index_beyond_int64_gives_a_clean_error(device):
    raises_clean((OverflowError, IndexError), lambda: kael.ones(3, device=device)[2 ** 70])


# Types and values of arguments.

def test_numpy_dtypes_kael_lacks_are_type_errors():
    for numpy_dtype in (np.uint16, np.uint32, np.complex64):
        raises_clean(TypeError, lambda: kael.ones(2, dtype=numpy_dtype), "uint16"
                     if numpy_dtype is np.uint16 else None)
    assert kael.ones(2, dtype=np.int32).dtype == kael.int32
    assert kael.ones(2, dtype=np.uint8).dtype == kael.uint8
    assert kael.ones(2, dtype=np.float16).dtype == kael.float16
    assert kael.ones(2, dtype=np.float32).dtype == kael.float32
    assert kael.ones(2, dtype=np.int64).dtype == kael.int64
    assert kael.ones(2, dtype=np.bool_).dtype == kael.bool_


def test_gelu_approximate_is_checked(device):
    x = kael.ones(3, device=device)
    raises_clean(ValueError, lambda: kael.gelu(x, approximate="bogus"), "gelu")
    raises_clean(ValueError, lambda: x.gelu(approximate="Tanh"), "gelu")
    raises_clean(TypeError, lambda: kael.gelu(x, approximate=3), "gelu")
    assert kael.gelu(x, approximate="tanh").shape == (3,)


def test_clamp_of_an_int_tensor_with_float_bounds_promotes(device):
    values = np.array([0, 1, 2, 3], dtype=np.int64)
    out = kael.clamp(kael.tensor(values, device=device), 1.5, 2.5)
    assert out.dtype == kael.float32
    assert out.tolist() == np.clip(values.astype(np.float32), 1.5, 2.5).tolist()
    assert kael.tensor(values, device=device).clamp(max=2).dtype == kael.int64
    raises_clean(ValueError, lambda: kael.clamp(kael.tensor(values, device=device)), "clamp")
    raises_clean(TypeError, lambda: kael.clamp(kael.ones(2, device=device), "a"), "clamp")


def test_clamp_with_tensor_bounds(device):
    x = np.array([[-3.0, 0.5, 4.0], [1.0, -1.0, 9.0]], dtype=np.float32)
    low = np.array([-1.0, 0.0, 1.0], dtype=np.float32)
    high = np.array([[2.0], [0.5]], dtype=np.float32)
    t = kael.tensor(x, device=device)
    low_t, high_t = kael.tensor(low, device=device), kael.tensor(high, device=device)
    assert kael.clamp(t, min=low_t).tolist() == np.maximum(x, low).tolist()
    assert t.clamp(max=high_t).tolist() == np.minimum(x, high).tolist()
    assert kael.clamp(t, low_t, high_t).tolist() == np.minimum(np.maximum(x, low), high).tolist()
    assert kael.clamp(t, low_t, 2.0).tolist() == np.clip(x, low, 2.0).tolist()


def test_max_and_min_of_two_tensors_are_elementwise(device):
    a = np.array([1.0, 5.0, -2.0], dtype=np.float32)
    b = np.array([3.0, 4.0, -7.0], dtype=np.float32)
    ta, tb = kael.tensor(a, device=device), kael.tensor(b, device=device)
    assert kael.max(ta, tb).tolist() == np.maximum(a, b).tolist()
    assert kael.min(ta, tb).tolist() == np.minimum(a, b).tolist()
    assert ta.max(tb).tolist() == np.maximum(a, b).tolist()
    assert kael.max(ta).item() == a.max()
    raises_clean(TypeError, lambda: kael.prod(ta, tb), "prod")
    raises_clean(TypeError, lambda: kael.max(ta, "0"), "max")


def test_dims_and_optional_tensors_are_checked(device):
    x = kael.ones(2, 3, device=device)
    raises_clean(TypeError, lambda: x.sum(dim=1.5), "sum")
    raises_clean(TypeError, lambda: x.mean(dim="a"), "mean")
    raises_clean(TypeError, lambda: x.size("a"), "size")
    raises_clean(TypeError, lambda: x.squeeze(0.0), "squeeze")
    raises_clean(TypeError, lambda: kael.layer_norm(x, weight=1.0), "layer_norm")
    raises_clean(TypeError, lambda: kael.linear(x, kael.ones(4, 3, device=device), bias=[1.0]),
                 "linear")
    raises_clean(TypeError, lambda: x.fill_("a"), "fill_")
    raises_clean(TypeError, lambda: x.view("a", 3), "view")


def test_autograd_arguments_are_checked(device):
    x = kael.ones(3, requires_grad=True, device=device)

    def set_grad():
        x.grad = [1.0, 2.0, 3.0]
    raises_clean(TypeError, set_grad, "grad")
    raises_clean(TypeError, lambda: kael.autograd.gradcheck(lambda a: a * 2, [1.0]), "gradcheck")
    double = kael.ones(2, dtype="f64", requires_grad=True)
    raises_clean(TypeError, lambda: kael.autograd.gradcheck(lambda a: 1.0, [double]), "gradcheck")


def test_arange_huge_or_endless_is_a_clean_error():
    raises_clean(OverflowError, lambda: kael.arange(0, 2 ** 63), "arange")
    raises_clean(TypeError, lambda: kael.arange(0, "10"), "arange")
    for call in (lambda: kael.arange(0, 2 ** 62), lambda: kael.arange(0, math.inf),
                 lambda: kael.arange(0, 1, 1e-300)):
        raises_clean((MemoryError, ValueError), call, "arange")


def test_pybind11_cast_errors_become_type_errors():
    # __dlpack__ converts stream itself through pybind11: the safety net catches what is left.
    raises_clean(TypeError, lambda: kael.ones(2).__dlpack__(stream="x"))


# Python spellings in messages that come from the core.

def test_in_place_on_a_leaf_suggests_no_grad(device):
    x = kael.ones(3, requires_grad=True, device=device)
    message = raises_clean(ValueError, lambda: x.fill_(2.0))
    assert "kael.no_grad()" in message and "NoGradGuard" not in message
    message = raises_clean(ValueError, lambda: x.as_strided([3], [1]))
    assert "kael.no_grad()" in message and "NoGradGuard" not in message


def test_second_backward_suggests_retain_graph_true(device):
    y = kael.ones(2, requires_grad=True, device=device) * 2
    y.sum().backward()
    message = raises_clean(RuntimeError, lambda: y.sum().backward())
    assert "retain_graph=True" in message and "retain_graph=true" not in message


def test_requires_grad_messages_use_python_names(device):
    computed = kael.ones(2, requires_grad=True, device=device) * 2

    def clear():
        computed.requires_grad = False
    message = raises_clean(ValueError, clear, "requires_grad_")
    assert "set_requires_grad" not in message
    message = raises_clean(TypeError, lambda: kael.ones(2, dtype="i64").requires_grad_())
    assert "set_requires_grad" not in message

    def wrong_grad():
        kael.ones(3, requires_grad=True, device=device).grad = kael.ones(2, device=device)
    message = raises_clean(ValueError, wrong_grad, "grad")
    assert "set_grad" not in message


def test_integer_aranges_are_exact(device):
    for start in (2 ** 60, 2 ** 53, -2 ** 63):
        t = kael.arange(start, start + 3, device=device)
        assert t.dtype == kael.int64
        assert t.tolist() == [start, start + 1, start + 2]
    assert kael.arange(INT64_MAX - 4, INT64_MAX, 2, device=device).tolist() == [
        INT64_MAX - 4, INT64_MAX - 2]
    assert kael.arange(np.int64(5), device=device).tolist() == list(range(5))
    assert kael.arange(0, 1, 0.25, device=device).tolist() == [0.0, 0.25, 0.5, 0.75]


def test_python_spellings_replace_whole_words_only():
    spell = kael._kael._python_spelling
    assert spell("use kael::NoGradGuard or NoGradGuard") == "use kael.no_grad() or kael.no_grad()"
    assert spell("call backward with retain_graph = true") == "call backward with retain_graph=True"
    assert spell("set_requires_grad(true) first") == "requires_grad_() first"
    assert spell("set_grad: shape") == "grad: shape"
    assert spell("kael::Tensor is nullptr") == "kael.Tensor is None"
    # Parts of longer names stay as they are.
    assert spell("set_grad_enabled, my_NoGradGuards") == "set_grad_enabled, my_NoGradGuards"


def test_signatures_in_argument_errors_use_python_names():
    # pybind11 prints these signatures when no overload takes the arguments.
    message = raises_clean(OverflowError, lambda: kael.randint(0, 2 ** 70, (2,)), "randint")
    assert "::" not in message
    objects = [getattr(kael._kael, name) for name in dir(kael._kael)]
    objects += [getattr(kael.Tensor, name) for name in dir(kael.Tensor)]
    with_cpp_names = [getattr(o, "__name__", o) for o in objects
                      if callable(o) and "::" in (getattr(o, "__doc__", "") or "")]
    assert with_cpp_names == []


def test_dtype_and_device_errors_name_the_op(device):
    raises_clean(TypeError, lambda: kael.ones(2, dtype=3, device=device), "ones")
    raises_clean(TypeError, lambda: kael.arange(3, device=3), "arange")
    raises_clean(TypeError, lambda: kael.tensor([1.0], dtype=[], device=device), "tensor")
    raises_clean(TypeError, lambda: kael.ones(2, device=device).to(3), "to")


def test_sizes_given_as_int_tensors(device):
    assert kael.zeros(kael.tensor(2), device=device).shape == (2,)
    assert kael.zeros(kael.tensor([2, 3]), device=device).shape == (2, 3)
    assert kael.full(kael.tensor([2]), 1.0, device=device).shape == (2,)
    assert kael.full(kael.tensor(2), 1, device=device).tolist() == [1, 1]
    assert kael.randint(0, 3, kael.tensor(4), device=device).shape == (4,)
    raises_clean(TypeError, lambda: kael.zeros(kael.tensor([2.5])), "zeros")
    raises_clean(TypeError, lambda: kael.ones(2, 3).sum(dim=kael.tensor([0, 1])), "sum")


def test_lists_of_numpy_arrays_keep_their_values(device):
    # Each item of a numpy array is a new scalar object, which must be held while it is read.
    rows = [np.arange(5, dtype=np.float64) * (i + 1) + 0.5 for i in range(40)]
    t = kael.tensor(rows, device=device)
    assert t.tolist() == [row.tolist() for row in rows]
    assert kael.tensor([np.arange(3), np.arange(3) + 7], device=device).tolist() == [
        [0, 1, 2], [7, 8, 9]]


def test_zero_dimensional_numpy_arrays_stay_zero_dimensional(device):
    assert kael.tensor(np.array(2.5), device=device).shape == ()
    assert kael.tensor(np.array(7, dtype=np.uint64), device=device).item() == 7


def test_fill_with_a_one_element_tensor_from_any_device(device):
    assert kael.ones(2, device=device).fill_(kael.tensor(3.0)).tolist() == [3.0, 3.0]
    other = "cpu" if device != "cpu" else device
    assert kael.zeros(2, dtype="i64", device=other).fill_(
        kael.tensor(4, device=device)).tolist() == [4, 4]
    raises_clean(ValueError, lambda: kael.ones(2, device=device).fill_(kael.ones(2)), "fill_")


def test_cross_entropy_reduction_is_checked(device):
    logits, targets = kael.ones(2, 3, device=device), kael.tensor([0, 1], device=device)
    raises_clean(ValueError, lambda: kael.cross_entropy(logits, targets, reduction="avg"),
                 "cross_entropy")

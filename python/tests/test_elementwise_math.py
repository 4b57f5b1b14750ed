"""The rounding, division, math and bitwise elementwise ops against torch on every device:
rounding, the division family, classification, more math, silu, bitwise ops, their operators,
in-place forms and gradients."""
import inspect
import math

import numpy as np
import pytest
import torch

import kael

NAN, INF = float("nan"), float("inf")
# Specials, half-way cases and signed zeros: what rounding and division disagree on most.
FLOATS = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1.49999, 3.7, -3.7, 1e-10, -7.0, 1e20, NAN, INF,
          -INF, 2.0, -1.0]
INTS = [0, 1, -1, 7, -7, 13, -13, 2**62, -(2**63), 2**63 - 1, 5, -5]
DTYPES = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64, "bool": torch.bool}


def pair(values, dtype, device):
    return kael.tensor(values, dtype=dtype, device=device), torch.tensor(values,
                                                                          dtype=DTYPES[dtype])


def same(ours, theirs, rtol=1e-6, atol=1e-6):
    assert ours.dtype == {torch.float32: kael.float32, torch.float64: kael.float64,
                          torch.int64: kael.int64, torch.bool: kael.bool_}[theirs.dtype]
    got = ours.cpu().numpy()
    want = theirs.numpy()
    assert got.shape == want.shape
    if theirs.dtype.is_floating_point:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
        # the sign of zeros too (round(-0.5) = -0.0, floor_divide(-0.0, 1) = -0.0)
        zeros = want == 0
        np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
    else:
        np.testing.assert_array_equal(got, want)


ROUNDING = kael._kael._op_rows()["rounding"] + ["round"]
CLASSIFY = kael._kael._op_rows()["classify"]
MATH = kael._kael._op_rows()["float_math"]  # the rows of kael/op_rows.h
NUMERIC = kael._kael._op_rows()["numeric"]
COMPARISON = kael._kael._op_rows()["comparison"]
ARITHMETIC = kael._kael._op_rows()["arithmetic"]


@pytest.mark.parametrize("name", ROUNDING + ["frac"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_rounding_matches_torch(device, name, dtype):
    ours, theirs = pair(FLOATS, dtype, device)
    same(getattr(kael, name)(ours), getattr(torch, name)(theirs))
    same(getattr(ours, name)(), getattr(theirs, name)())


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("dtype", ["f32", "f64", "i64"])
def test_numeric_rows_match_torch(device, name, dtype):
    # Without NaN and -0.0, where kael keeps numpy's rules: sign(nan) is nan (torch: 0) and
    # relu(-0.0) is +0.0 (torch: -0.0); tests/reference holds them to numpy.
    floats = [v for v in FLOATS if v == v and math.copysign(1.0, v) > 0 or v < 0]
    values = floats if dtype != "i64" else [v for v in INTS if abs(v) < 2**31]
    ours, theirs = pair(values, dtype, device)
    same(getattr(kael, name)(ours), getattr(torch, name)(theirs))
    same(getattr(ours, name)(), getattr(theirs, name)())
    assert getattr(ours, name + "_")() is ours
    getattr(theirs, name + "_")()
    same(ours, theirs)


@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_integers_pass_bool_refused(device, name):
    ours, theirs = pair(INTS, "i64", device)
    same(getattr(kael, name)(ours), getattr(torch, name)(theirs))
    with pytest.raises(TypeError, match=name):
        getattr(kael, name)(kael.tensor([True], device=device))
    with pytest.raises(TypeError, match="frac"):
        kael.frac(ours)


@pytest.mark.parametrize("decimals", [1, 2, -1, -2])
def test_round_decimals(device, decimals):
    values = [1.2345, -2.5551, 123.456, 0.125, -0.0, 1550.0, NAN]
    for dtype in ["f32", "f64"]:
        ours, theirs = pair(values, dtype, device)
        same(kael.round(ours, decimals=decimals), torch.round(theirs, decimals=decimals))
        same(ours.round(decimals=decimals), theirs.round(decimals=decimals))


DIVIDENDS = [5.0, -5.0, 7.5, -7.5, 0.0, -0.0, 1.0, -1.0, INF, NAN, 3.0, 1e20]
DIVISORS = [3.0, 3.0, -2.0, 2.0, 2.0, -2.0, 0.0, -0.0, 3.0, 1.0, INF, 7.0]


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_division_family_floats(device, name, dtype):
    a, ta = pair(DIVIDENDS, dtype, device)
    b, tb = pair(DIVISORS, dtype, device)
    same(getattr(kael, name)(a, b), getattr(torch, name)(ta, tb))
    same(getattr(a, name)(b), getattr(ta, name)(tb))
    same(getattr(kael, name)(a, -2.5), getattr(torch, name)(ta, -2.5))


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide"])
def test_division_family_integers(device, name):
    a_values = [5, -5, 7, -7, 0, 13, -13, -(2**63), 2**63 - 1, 1]
    b_values = [3, 3, -2, -2, 5, 4, -4, 3, 7, 1]
    a, ta = pair(a_values, "i64", device)
    b, tb = pair(b_values, "i64", device)
    same(getattr(kael, name)(a, b), getattr(torch, name)(ta, tb))
    # Broadcasting a column against a row.
    same(getattr(kael, name)(a.reshape(10, 1), b), getattr(torch, name)(ta.reshape(10, 1), tb))


def test_integer_division_by_zero_gives_zero(device):
    a = kael.tensor([5, -5, 0], device=device)
    zero = kael.zeros(3, dtype="i64", device=device)
    for op in (kael.fmod, kael.remainder, kael.floor_divide):
        assert op(a, zero).tolist() == [0, 0, 0]
    # INT64_MIN // -1 wraps rather than trapping; its remainder is 0.
    smallest = kael.tensor([-(2**63)], device=device)
    assert (smallest // -1).tolist() == [-(2**63)]
    assert (smallest % -1).tolist() == [0]


def test_division_promotion_and_bool(device):
    i = kael.tensor([5, -5], device=device)
    assert (i // 2.5).dtype == kael.float32 and (i // 2).dtype == kael.int64
    assert (i // kael.tensor([2.0], dtype="f64", device=device)).dtype == kael.float64
    same(i // 2.5, torch.tensor([5, -5]) // 2.5)
    with pytest.raises(TypeError, match="floor_divide"):
        kael.floor_divide(kael.tensor([True], device=device), kael.tensor([True], device=device))


def test_operators_mod_floordiv(device):
    a, ta = pair([5.0, -5.0, 7.5, -0.0], "f32", device)
    same(a % 3, ta % 3)
    same(a // -2, ta // -2)
    same(7 % a, 7 % ta)  # reflected: 7 % 0.0 is nan
    same(7 // a, 7 // ta)
    b, tb = pair([-2.0, 3.0, 0.0, 2.0], "f32", device)
    same(a % b, ta % tb)
    same(a // b, ta // tb)
    i, ti = pair([5, -5, 9], "i64", device)
    same(i % 4, ti % 4)
    same(-13 // i, -13 // ti)


@pytest.mark.parametrize("name", CLASSIFY)
@pytest.mark.parametrize("dtype", ["f32", "f64", "i64", "bool"])
def test_classification(device, name, dtype):
    values = {"f32": FLOATS, "f64": FLOATS, "i64": INTS, "bool": [True, False]}[dtype]
    ours, theirs = pair(values, dtype, device)
    result = getattr(kael, name)(ours)
    same(result, getattr(torch, name)(theirs))
    same(getattr(ours, name)(), getattr(theirs, name)())
    assert result.device == ours.device


@pytest.mark.parametrize("name", COMPARISON)
@pytest.mark.parametrize("dtypes", [("f32", "f32"), ("f64", "i64"), ("i64", "i64"),
                                    ("bool", "bool"), ("i64", "f32")])
def test_comparisons_match_torch(device, name, dtypes):
    """Each comparison row as a function, a method and (where it has one) an operator, with a
    tensor and with a Python number, NaN and infinities included, broadcast from a row."""
    pools = {"f32": FLOATS, "f64": FLOATS, "i64": INTS, "bool": [True, False, True, False]}
    left = pools[dtypes[0]][:8]
    right = ([True, True, False, False] if dtypes[1] == "bool"
             else pools[dtypes[1]][-len(left):])
    ours, theirs = pair([left, left[::-1]], dtypes[0], device)
    ours_row, theirs_row = pair(right, dtypes[1], device)
    same(getattr(kael, name)(ours, ours_row), getattr(torch, name)(theirs, theirs_row))
    same(getattr(ours, name)(ours_row), getattr(theirs, name)(theirs_row))
    operator = f"__{name}__"  # eq ... ge have one; logical_and and logical_or none
    has_operator = hasattr(torch.Tensor, operator)
    # torch 1.13's logical_and/or take no Python number; kael's do, as its comparisons.
    same(getattr(kael, name)(ours, 1),
         getattr(torch, name)(theirs, 1 if has_operator else torch.tensor(1)))
    if has_operator:
        same(getattr(ours, operator)(ours_row), getattr(theirs, operator)(theirs_row))
    assert list(inspect.signature(getattr(kael, name)).parameters) == ["input", "other"]
    assert getattr(kael, name).__doc__.startswith("True where")


@pytest.mark.parametrize("name", ARITHMETIC)
@pytest.mark.parametrize("dtypes", [("f32", "f32"), ("f64", "i64"), ("i64", "i64"),
                                    ("i64", "f32"), ("bool", "i64")])
def test_arithmetic_rows_match_torch(device, name, dtypes):
    """Each arithmetic row as a function and a method, with a tensor broadcast from a row and
    with a Python number, beside torch: promotion, NaN, infinities and signed zeros included."""
    small = {"f32": [0.0, -0.0, 0.5, -2.5, 3.7, NAN, INF, -INF, 2.0, 7.0],
             "f64": [0.0, -0.0, 0.5, -2.5, 3.7, NAN, INF, -INF, 2.0, 7.0],
             "i64": [0, 1, -1, 7, -7, 13, 5, -5, 2, 3], "bool": [True, False] * 5}
    left = small[dtypes[0]]
    right = small[dtypes[1]][::-1]
    if name == "pow":  # integers to negative integer powers are an error (tested below)
        right = [abs(v) for v in right] if dtypes[1] == "i64" else right
    if name == "div" and dtypes == ("i64", "i64"):
        right = [v or 3 for v in right]  # torch's integer 0 / 0 is nan as ours; keep it finite
    ours, theirs = pair([left, left[::-1]], dtypes[0], device)
    ours_row, theirs_row = pair(right, dtypes[1], device)
    if name == "sub" and dtypes[0] == "bool":
        theirs = theirs.long()  # torch refuses any bool operand; kael promotes one (i64 here)
    same(getattr(kael, name)(ours, ours_row), getattr(torch, name)(theirs, theirs_row),
         rtol=1e-5)
    same(getattr(ours, name)(ours_row), getattr(theirs, name)(theirs_row), rtol=1e-5)
    # torch 1.13's maximum/minimum take no Python number; kael's do, as its other rows.
    scalar = torch.tensor(2) if name in ("maximum", "minimum") else 2
    same(getattr(kael, name)(ours, 2), getattr(torch, name)(theirs, scalar), rtol=1e-5)
    assert list(inspect.signature(getattr(kael, name)).parameters) == ["input", "other"]


def test_arithmetic_rows_refuse_what_torch_refuses(device):
    flags = kael.tensor([True, False], device=device)
    with pytest.raises(TypeError, match="sub: subtraction of two bool tensors"):
        kael.sub(flags, flags)
    with pytest.raises(TypeError, match="pow: not supported for bool tensors"):
        kael.pow(flags, flags)
    with pytest.raises(ValueError, match="pow: integers to negative integer powers"):
        kael.pow(kael.tensor([2, 3], device=device), kael.tensor([1, -1], device=device))


@pytest.mark.parametrize("name", COMPARISON + CLASSIFY)
def test_bool_rows_of_long_f32_runs_match_torch(device, name):
    """Comparisons, logical ops and classification over runs long enough for the cpu plugin's
    vector loops (a contiguous 40x50 and its transpose, which goes through tiles), with NaN,
    infinities, zeros of both signs and equal pairs among the values."""
    rng = np.random.default_rng(41)
    left = rng.choice(np.array(FLOATS + [0.0, -0.0, 2.0], dtype=np.float32), size=(40, 50))
    right = np.where(rng.random((40, 50)) < 0.3, left,
                     rng.choice(np.array(FLOATS, dtype=np.float32), size=(40, 50)))
    ours, theirs = kael.tensor(left, device=device), torch.tensor(left)
    if name in CLASSIFY:
        for a, b in ((ours, theirs), (ours.T, theirs.T)):
            same(getattr(kael, name)(a), getattr(torch, name)(b))
        return
    ours_right, theirs_right = kael.tensor(right, device=device), torch.tensor(right)
    same(getattr(kael, name)(ours, ours_right), getattr(torch, name)(theirs, theirs_right))
    square, theirs_square = ours_right[:40, :40], theirs_right[:40, :40]
    same(getattr(kael, name)(ours[:, :40], square.T),
         getattr(torch, name)(theirs[:, :40], theirs_square.T))


def test_nan_to_num(device):
    for dtype in ["f32", "f64"]:
        ours, theirs = pair([NAN, INF, -INF, 1.5, -0.0], dtype, device)
        same(kael.nan_to_num(ours), torch.nan_to_num(theirs))
        same(kael.nan_to_num(ours, nan=2.0, posinf=9.0, neginf=-9.0),
             torch.nan_to_num(theirs, nan=2.0, posinf=9.0, neginf=-9.0))
        same(ours.nan_to_num(neginf=-1.0), theirs.nan_to_num(neginf=-1.0))
    ints, tints = pair(INTS, "i64", device)
    same(kael.nan_to_num(ints), torch.nan_to_num(tints))


@pytest.mark.parametrize("name", MATH + ["silu"])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_math_matches_torch(device, name, dtype):
    values = [0.0, -0.0, 1e-10, -1e-10, 0.5, -0.5, 1.0, 3.0, -3.0, 10.0, -10.0, 30.0, NAN, INF,
              -INF, -0.999, 100.0]
    # 1000 elements too, so the cpu's contiguous f32 vector path runs.
    many = list(np.linspace(-12, 12, 1000))
    ref = torch.nn.functional.silu if name == "silu" else getattr(torch, name)
    for data in (values, many):
        ours, theirs = pair(data, dtype, device)
        rtol = 2e-6 if dtype == "f32" else 1e-12
        same(getattr(kael, name)(ours), ref(theirs), rtol=rtol, atol=1e-30)
        same(getattr(ours, name)(), ref(theirs), rtol=rtol, atol=1e-30)
        # a strided view takes the generic path
        same(getattr(kael, name)(ours[::2]), ref(theirs[::2]), rtol=rtol, atol=1e-30)


def test_math_integers_compute_in_f32_and_silu_refuses(device):
    ours, theirs = pair([1, 2, 3], "i64", device)
    for name in MATH:
        same(getattr(kael, name)(ours), getattr(torch, name)(theirs))
    with pytest.raises(TypeError, match="silu"):
        kael.silu(ours)


BITS_A = [12, -1, 5, 0, 2**62, -(2**63), 2**63 - 1, 7]
BITS_B = [10, 3, -6, 0, 2**62, -1, 1, 7]


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise(device, name):
    a, ta = pair(BITS_A, "i64", device)
    b, tb = pair(BITS_B, "i64", device)
    same(getattr(kael, name)(a, b), getattr(torch, name)(ta, tb))
    same(getattr(a, name)(b), getattr(ta, name)(tb))
    same(getattr(kael, name)(a, 6), getattr(torch, name)(ta, 6))
    p, tp = pair([True, True, False, False], "bool", device)
    q, tq = pair([True, False, True, False], "bool", device)
    same(getattr(kael, name)(p, q), getattr(torch, name)(tp, tq))
    same(getattr(kael, name)(p, a[:4]), getattr(torch, name)(tp, ta[:4]))  # bool with i64
    with pytest.raises(TypeError, match=name):
        getattr(kael, name)(kael.tensor([1.5], device=device), a[:1])


def test_bitwise_not_and_operators(device):
    a, ta = pair(BITS_A, "i64", device)
    b, tb = pair(BITS_B, "i64", device)
    p, tp = pair([True, False], "bool", device)
    same(~a, ~ta)
    same(~p, ~tp)
    same(kael.bitwise_not(a), torch.bitwise_not(ta))
    same(a & b, ta & tb)
    same(a | b, ta | tb)
    same(a ^ b, ta ^ tb)
    same(3 & a, 3 & ta)
    same(a | 3, ta | 3)
    same(5 ^ a, 5 ^ ta)
    same(p & True, tp & True)
    same(p | p, tp | tp)
    same(p ^ True, tp ^ True)
    with pytest.raises(TypeError):
        ~kael.tensor([1.0], device=device)


def test_shifts(device):
    a, ta = pair([1, -8, 5, -1, 2**40, 3], "i64", device)
    counts, tcounts = pair([0, 1, 2, 63, 20, 62], "i64", device)
    same(a << counts, ta << tcounts)
    same(a >> counts, ta >> tcounts)
    same(kael.bitwise_left_shift(a, counts), torch.bitwise_left_shift(ta, tcounts))
    same(kael.bitwise_right_shift(a, 3), torch.bitwise_right_shift(ta, 3))
    same(1 << counts, 1 << tcounts)
    same(1024 >> counts, 1024 >> tcounts)
    # Counts outside [0, 64): PyTorch 2's rule (torch 1.13's cpu takes them modulo 64).
    big = kael.tensor([64, 100, -1], device=device)
    x = kael.tensor([-5, 5, -5], device=device)
    assert (x << big).tolist() == [0, 0, 0]
    assert (x >> big).tolist() == [-1, 0, -1]
    with pytest.raises(TypeError, match="shift"):
        kael.tensor([True], device=device) << kael.tensor([True], device=device)


def test_in_place_forms(device):
    base = [5.5, -5.5, 2.5, -0.5]
    for name in ROUNDING + ["frac"] + MATH + ["silu"]:
        ours, theirs = pair(base, "f64", device)
        result = getattr(ours, name + "_")()
        assert result is ours
        ref = torch.nn.functional.silu(theirs) if name == "silu" else getattr(torch, name)(
            theirs)
        same(ours, ref, rtol=1e-12)
    for name, divisor in [("fmod", 2.0), ("remainder", -2.0), ("floor_divide", 2.0)]:
        ours, theirs = pair(base, "f32", device)
        assert getattr(ours, name + "_")(divisor) is ours
        same(ours, getattr(torch, name)(theirs, divisor))
    ours, theirs = pair(base, "f32", device)
    ours.round_(decimals=1)
    same(ours, theirs.round(decimals=1))
    ours, theirs = pair([NAN, INF], "f32", device)
    ours.nan_to_num_(posinf=1.0)
    same(ours, theirs.nan_to_num(posinf=1.0))
    bits, tbits = pair(BITS_A, "i64", device)
    for name, other in [("bitwise_and", 6), ("bitwise_or", 9), ("bitwise_xor", 3),
                        ("bitwise_left_shift", 2), ("bitwise_right_shift", 1)]:
        getattr(bits, name + "_")(other)
        tbits = getattr(tbits, name + "_")(other)
        same(bits, tbits)
    bits.bitwise_not_()
    same(bits, tbits.bitwise_not_())
    # int tensor // float: the float result cannot be written back (PyTorch's rule)
    with pytest.raises(TypeError, match="floor_divide_"):
        kael.tensor([5], device=device).floor_divide_(2.5)


def test_in_place_operators(device):
    a, ta = pair([5.5, -5.5, 2.5], "f32", device)
    identity = id(a)
    a %= 2
    ta %= 2
    a //= -1.5
    ta //= -1.5
    assert id(a) == identity
    same(a, ta)
    i, ti = pair(BITS_A, "i64", device)
    identity = id(i)
    for op in ["&=", "|=", "^=", "<<=", ">>="]:
        exec(f"i {op} 3")
        exec(f"ti {op} 3")
    assert id(i) == identity
    same(i, ti)
    n = kael.tensor([5], device=device)
    with pytest.raises(TypeError, match="//="):
        n //= 2.5
    with pytest.raises(TypeError, match="&="):
        f = kael.tensor([1.0], device=device)
        f &= 1


@pytest.mark.parametrize("name", MATH + ["silu", "frac"])
def test_gradcheck_unary(device, name):
    x = (kael.rand(7, dtype="f64", device=device) * 1.5 + 0.2).requires_grad_()
    assert kael.autograd.gradcheck(lambda t: getattr(kael, name)(t), x)


@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_gradcheck_division(device, name):
    # Away from the jumps of fmod and remainder (where the ratio is an integer).
    a = kael.tensor([5.3, -5.3, 7.7, -1.1, 2.6], dtype="f64", device=device).requires_grad_()
    b = kael.tensor([2.1, 2.1, -3.1, 0.7, -1.7], dtype="f64", device=device).requires_grad_()
    assert kael.autograd.gradcheck(lambda x, y: getattr(kael, name)(x, y), (a, b))
    ta = torch.tensor(a.tolist(), dtype=torch.float64, requires_grad=True)
    tb = torch.tensor(b.tolist(), dtype=torch.float64, requires_grad=True)
    getattr(torch, name)(ta, tb).sum().backward()
    getattr(kael, name)(a, b).sum().backward()
    same(a.grad, ta.grad, rtol=1e-12)
    same(b.grad, tb.grad, rtol=1e-12)


@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_gradients_are_zero(device, name):
    x = kael.tensor([1.5, -0.3], device=device, requires_grad=True)
    getattr(kael, name)(x).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_silu_gradient_matches_torch(device):
    values = list(np.linspace(-20, 20, 41))
    x = kael.tensor(values, dtype="f32", device=device, requires_grad=True)
    tx = torch.tensor(values, dtype=torch.float32, requires_grad=True)
    (kael.silu(x) * kael.arange(41, device=device)).sum().backward()
    (torch.nn.functional.silu(tx) * torch.arange(41)).sum().backward()
    same(x.grad, tx.grad, rtol=1e-5, atol=1e-6)


def test_docstrings_have_signatures():
    import inspect
    assert str(inspect.signature(kael.round)) == "(input, *, decimals=0)"
    assert str(inspect.signature(kael.Tensor.fmod)) == "(self, other)"
    assert str(inspect.signature(kael.Tensor.floor_)) == "(self)"
    assert str(inspect.signature(kael.nan_to_num)) == "(input, nan=0.0, posinf=None, neginf=None)"
    assert "Example" in kael.bitwise_left_shift.__doc__
    assert math.isclose(kael.tensor([2.0]).log2().item(), 1.0)

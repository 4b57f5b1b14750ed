#pragma once
// Docstrings of the rounding, division, float math, comparison and bitwise elementwise ops (bind_elemops.cpp
// composes each function's, method's and in-place method's docstring from one entry:
// signature, text, example).
#include <string_view>

namespace kael::python::docs {

struct ElementDoc {
    const char* name;
    const char* arguments;  // after input (function) or $self (method), with a leading ", "
    const char* example;    // the example's input tensor
    const char* example_arguments;  // the example's further arguments, with a leading ", "
    const char* text;       // summary, arguments, result
    const char* args = nullptr;  // the Args block when not the family's (element_doc_arguments)
};

inline constexpr const char* kRoundingArgs = R"doc(
Args:
    input (Tensor): any shape and device; f32 or f64 (an i64 tensor is returned as a copy, as
        PyTorch does; bool is a TypeError).

Returns a new tensor of input's shape, dtype and device; its gradient is zero everywhere (as
PyTorch's).)doc";

inline constexpr const char* kClassifyArgs = R"doc(
Args:
    input (Tensor): any shape, dtype and device (i64 and bool elements are finite).

Returns a bool tensor of input's shape on input's device; not differentiable.)doc";

inline constexpr const char* kMathArgs = R"doc(
Args:
    input (Tensor): any shape and device; f32 or f64 (i64 and bool compute in f32).

Returns a new tensor of input's shape on input's device; differentiable.)doc";

inline constexpr const char* kNumericArgs = R"doc(
Args:
    input (Tensor): any shape, dtype and device (bool computes in i64).

Returns a new tensor of input's shape and device, of its dtype (i64 for bool); differentiable.)doc";

inline constexpr const char* kArithmeticArgs = R"doc(
Args:
    input (Tensor or number), other (Tensor or number): shapes that broadcast together, on one
        device (a mixed-device pair is an error, never a silent copy); a Python number takes
        the tensor's dtype as in PyTorch, two tensors promote (int64 with f32 gives f32).

Returns a new tensor of the broadcast shape; differentiable in both arguments.)doc";

inline constexpr const char* kNegArgs = R"doc(
Args:
    input (Tensor): any shape and device; every dtype but bool (a TypeError, as in PyTorch: use
        logical_not).

Returns a new tensor of input's shape, dtype and device; differentiable.)doc";

inline constexpr const char* kLogicalNotArgs = R"doc(
Args:
    input (Tensor): any shape, dtype and device.

Returns a bool tensor of input's shape on input's device; not differentiable.)doc";

inline constexpr const char* kDivisionArgs = R"doc(
Args:
    input (Tensor or number), other (Tensor or number): shapes that broadcast together, on one
        device; f32, f64 or i64, promoting as add does (i64 with f32 gives f32; a Python number
        takes the tensor's dtype when it can); bool with bool is a TypeError.

Integer division by zero gives 0 (numpy's result; PyTorch's cpu raises, and checking would
synchronise the device on every call); float division by zero gives inf or nan as IEEE says.
Returns a new tensor of the broadcast shape.)doc";

inline constexpr const char* kBitwiseArgs = R"doc(
Args:
    input (Tensor or number), other (Tensor or number): shapes that broadcast together, on one
        device; i64 or bool (floats are a TypeError). bool with bool gives bool (the logical
        op), anything with i64 gives i64.

Returns a new tensor of the broadcast shape; not differentiable.)doc";

inline constexpr const char* kComparisonArgs = R"doc(
Args:
    input (Tensor or number), other (Tensor or number): shapes that broadcast together, on one
        device; any dtypes (compared after promotion).

Returns a bool tensor of the broadcast shape; not differentiable.)doc";

inline constexpr const char* kShiftArgs = R"doc(
Args:
    input (Tensor or number), other (Tensor or number): i64 (bool and floats are a TypeError),
        shapes that broadcast together, on one device. The bits of input are shifted as two's
        complement; a shift count below 0 or from 64 on gives 0 for a left shift and the sign
        fill input >> 63 for a right one (PyTorch 2's rule; torch 1.13's cpu takes the count
        modulo 64).

Returns a new i64 tensor of the broadcast shape.)doc";

inline constexpr ElementDoc kElementDocs[] = {
    {"floor", "", "kael.tensor([-1.5, 0.5, 2.0])", "",
     "The largest integer not above each element (floor), as a float."},
    {"ceil", "", "kael.tensor([-1.5, 0.5, 2.0])", "",
     "The smallest integer not below each element (ceil), as a float."},
    {"round", ", *, decimals=0", "kael.tensor([0.5, 1.5, 2.5, -0.5, 1.2345])", "",
     "Each element rounded to the nearest integer, ties to even (as PyTorch: 0.5 -> 0, "
     "1.5 -> 2).\n\ndecimals (int, keyword): round to that many decimal places instead, "
     "computed as round(x * 10**decimals) / 10**decimals (negative: to tens, hundreds...)."},
    {"trunc", "", "kael.tensor([-1.5, 0.5, 2.7])", "",
     "Each element rounded toward zero (its integer part)."},
    {"frac", "", "kael.tensor([-1.5, 0.25, 2.0])", "",
     "The fractional part x - trunc(x) of each element (it has x's sign).\n\nArgs:\n"
     "    input (Tensor): any shape and device; f32 or f64 only (others are a TypeError).\n\n"
     "Returns a new tensor of input's shape, dtype and device; differentiable (gradient 1)."},
    {"fmod", ", other", "kael.tensor([-5.0, 5.0, 7.5])", ", 3",
     "The C remainder of input / other, element by element: its sign is the dividend's "
     "(fmod(-5, 3) = -2), as math.fmod. Differentiable in both arguments."},
    {"remainder", ", other", "kael.tensor([-5.0, 5.0, 7.5])", ", 3",
     "Python's modulus input % other, element by element: its sign is the divisor's "
     "(remainder(-5, 3) = 1). Differentiable in both arguments."},
    {"floor_divide", ", other", "kael.tensor([-5.0, 5.0, 7.5])", ", 2",
     "Python's floor division input // other, element by element: the quotient rounded down "
     "(floor_divide(-5, 2) = -3; PyTorch >= 1.13). Not differentiable."},
    {"isnan", "", "kael.tensor([1.0, float('nan'), float('inf')])", "",
     "True where the element is NaN."},
    {"isinf", "", "kael.tensor([1.0, float('nan'), float('-inf')])", "",
     "True where the element is +inf or -inf."},
    {"isfinite", "", "kael.tensor([1.0, float('nan'), float('inf')])", "",
     "True where the element is neither NaN nor infinite."},
    {"isposinf", "", "kael.tensor([1.0, float('inf'), float('-inf')])", "",
     "True where the element is +inf."},
    {"isneginf", "", "kael.tensor([1.0, float('inf'), float('-inf')])", "",
     "True where the element is -inf."},
    {"nan_to_num", ", nan=0.0, posinf=None, neginf=None",
     "kael.tensor([float('nan'), float('inf'), -1.0])", ", nan=-1.0",
     "NaN, +inf and -inf replaced by nan, posinf and neginf.\n\nArgs:\n"
     "    input (Tensor): any shape, dtype and device (i64 and bool come back as a copy).\n"
     "    nan (float): the value for NaN.\n"
     "    posinf, neginf (float or None): the values for +inf and -inf; None takes the dtype's "
     "largest and lowest finite values.\n\n"
     "Returns a new tensor of input's shape, dtype and device; differentiable where input is "
     "kept."},
    {"exp", "", "kael.tensor([0.0, 1.0])", "", "The exponential e**x of each element."},
    {"log", "", "kael.tensor([1.0, 2.718281828])", "",
     "The natural logarithm of each element (-inf at 0, nan below)."},
    {"sqrt", "", "kael.tensor([4.0, 9.0])", "", "The square root of each element (nan below 0)."},
    {"rsqrt", "", "kael.tensor([4.0, 0.25])", "",
     "The reciprocal square root 1/sqrt(x) of each element."},
    {"sin", "", "kael.tensor([0.0, 1.5707963])", "", "The sine of each element, in radians."},
    {"cos", "", "kael.tensor([0.0, 3.1415927])", "", "The cosine of each element, in radians."},
    {"tanh", "", "kael.tensor([0.0, 1.0])", "", "The hyperbolic tangent of each element."},
    {"sigmoid", "", "kael.tensor([0.0, 2.0])", "",
     "The logistic sigmoid 1/(1+exp(-x)) of each element."},
    {"reciprocal", "", "kael.tensor([2.0, -4.0])", "",
     "The reciprocal 1/x of each element (inf at 0)."},
    {"abs", "", "kael.tensor([-1.5, 2.0])", "", "The absolute value of each element.",
     kNumericArgs},
    {"sign", "", "kael.tensor([-3.0, 0.0, 2.5])", "", "The sign (-1, 0 or 1) of each element.",
     kNumericArgs},
    {"square", "", "kael.tensor([-2.0, 3.0])", "", "The square x*x of each element.",
     kNumericArgs},
    {"relu", "", "kael.tensor([-1.0, 2.0])", "",
     "The rectified linear unit max(x, 0) of each element.", kNumericArgs},
    {"log1p", "", "kael.tensor([0.0, 1e-10, 1.0])", "",
     "log(1 + x) of each element, exact for small x."},
    {"expm1", "", "kael.tensor([0.0, 1e-10, 1.0])", "",
     "exp(x) - 1 of each element, exact for small x."},
    {"erf", "", "kael.tensor([-1.0, 0.0, 0.5])", "", "The error function of each element."},
    {"erfc", "", "kael.tensor([-1.0, 0.0, 5.0])", "",
     "The complementary error function 1 - erf(x) of each element, exact in the tail."},
    {"log2", "", "kael.tensor([1.0, 8.0, 0.5])", "", "The base-2 logarithm of each element."},
    {"log10", "", "kael.tensor([1.0, 1000.0, 0.1])", "",
     "The base-10 logarithm of each element."},
    {"exp2", "", "kael.tensor([0.0, 3.0, -1.0])", "", "2**x of each element."},
    {"silu", "", "kael.tensor([-1.0, 0.0, 2.0])", "",
     "The sigmoid linear unit x * sigmoid(x) of each element (also called swish), its gradient "
     "one fused kernel.\n\nArgs:\n    input (Tensor): any shape and device; f32 or f64 "
     "(others are a TypeError, as in PyTorch).\n\nReturns a new tensor of input's shape, dtype "
     "and device; differentiable."},
// add ... minimum: "<summary>, element by element, broadcasting."
#define KAEL_ARITHMETIC_DOC(name, summary)                                                 \
    {#name, ", other", "kael.tensor([1.0, 4.0])", ", kael.tensor([2.0, 2.0])",             \
     summary ", element by element, broadcasting.", kArithmeticArgs}
    KAEL_ARITHMETIC_DOC(add, "The sum input + other"),
    KAEL_ARITHMETIC_DOC(sub, "The difference input - other"),
    KAEL_ARITHMETIC_DOC(mul, "The product input * other"),
    KAEL_ARITHMETIC_DOC(div, "The true quotient input / other (integers divide to a float "
                             "result, as PyTorch's default rounding_mode=None)"),
    KAEL_ARITHMETIC_DOC(pow, "input raised to the power other"),
    KAEL_ARITHMETIC_DOC(maximum, "The larger of input and other (NaN wins)"),
    KAEL_ARITHMETIC_DOC(minimum, "The smaller of input and other (NaN wins)"),
#undef KAEL_ARITHMETIC_DOC
    {"neg", "", "kael.tensor([1.0, -2.0])", "", "The negation -x of each element.", kNegArgs},
    {"logical_not", "", "kael.tensor([0.0, 2.0])", "", "True where the element is zero (or False).",
     kLogicalNotArgs},
// eq ... ge: "True where input <relation> other".
#define KAEL_COMPARISON_DOC(name, relation)                                             \
    {#name, ", other", "kael.tensor([1, 2, 3])", ", 2",                                  \
     "True where input " relation " other, element by element, broadcasting.", kComparisonArgs}
    KAEL_COMPARISON_DOC(eq, "=="), KAEL_COMPARISON_DOC(ne, "!="), KAEL_COMPARISON_DOC(lt, "<"),
    KAEL_COMPARISON_DOC(le, "<="), KAEL_COMPARISON_DOC(gt, ">"), KAEL_COMPARISON_DOC(ge, ">="),
#undef KAEL_COMPARISON_DOC
    {"logical_and", ", other", "kael.tensor([0, 1, 2])", ", kael.tensor([1, 1, 0])",
     "True where both input and other are nonzero, element by element, broadcasting.",
     kComparisonArgs},
    {"logical_or", ", other", "kael.tensor([0, 1, 2])", ", kael.tensor([0, 0, 1])",
     "True where input or other is nonzero, element by element, broadcasting.",
     kComparisonArgs},
    {"bitwise_and", ", other", "kael.tensor([12, -1, 5])", ", 10",
     "The bitwise AND input & other, element by element."},
    {"bitwise_or", ", other", "kael.tensor([12, -1, 5])", ", 10",
     "The bitwise OR input | other, element by element."},
    {"bitwise_xor", ", other", "kael.tensor([12, -1, 5])", ", 10",
     "The bitwise exclusive OR input ^ other, element by element."},
    {"bitwise_not", "", "kael.tensor([0, -1, 5])", "",
     "The bitwise NOT ~input of each element (logical not for bool).\n\nArgs:\n"
     "    input (Tensor): any shape and device; i64 or bool (floats are a TypeError).\n\n"
     "Returns a new tensor of input's shape, dtype and device."},
    {"bitwise_left_shift", ", other", "kael.tensor([1, -3, 5])", ", 2",
     "input << other, element by element."},
    {"bitwise_right_shift", ", other", "kael.tensor([16, -16, 5])", ", 2",
     "input >> other (arithmetic: the sign is kept), element by element."},
};

// The argument paragraph of each entry; none for those whose text has its own "Args:".
inline const char* element_doc_arguments(const ElementDoc& doc) {
    const std::string_view name = doc.name;
    if (doc.args != nullptr) return doc.args;
    if (std::string_view(doc.text).find("Args:") != std::string_view::npos) return "";
    if (name == "floor" || name == "ceil" || name == "round" || name == "trunc") {
        return kRoundingArgs;
    }
    if (name.starts_with("is")) return kClassifyArgs;
    if (name == "fmod" || name == "remainder" || name == "floor_divide") return kDivisionArgs;
    if (name.ends_with("shift")) return kShiftArgs;
    if (name.starts_with("bitwise")) return kBitwiseArgs;
    return kMathArgs;
}

inline constexpr const char* kInPlaceText =
    "In-place form of {name}: the result is written into self's elements and self is "
    "returned. The result must be castable to self's dtype (no float result into an i64 "
    "tensor: TypeError), and self may not be a leaf that requires grad.";

}  // namespace kael::python::docs

#pragma once
// Elementwise operations with broadcasting and type promotion, their in-place forms and the
// operators. All operands live on one device; numbers become 0-d tensors on it. Each runs
// through one plugin kernel (a row of KAEL_ELEMENT_OPS) or is composed from those.
#include <cstdint>
#include <optional>
#include <string>

#include "kael/op_rows.h"
#include "kael/tensor.h"

namespace kael {

// Elementwise, with broadcasting and type promotion: add, sub, mul, div, pow, maximum, minimum
// (kael/op_rows.h).
#define KAEL_DECLARE_ARITHMETIC(name, OP, RULE) \
    [[nodiscard]] Tensor name(const Tensor& a, const Tensor& b);
KAEL_ARITHMETIC_FUNCTIONS(KAEL_DECLARE_ARITHMETIC)
#undef KAEL_DECLARE_ARITHMETIC
// eq, ne, lt, le, gt, ge, logical_and, logical_or: bool results (kael/op_rows.h).
#define KAEL_DECLARE_COMPARISON(name, OP, OPERATOR) \
    [[nodiscard]] Tensor name(const Tensor& a, const Tensor& b);
KAEL_COMPARISON_FUNCTIONS(KAEL_DECLARE_COMPARISON)
#undef KAEL_DECLARE_COMPARISON
[[nodiscard]] Tensor logical_not(const Tensor& a);
[[nodiscard]] Tensor neg(const Tensor& a);
[[nodiscard]] Tensor gelu(const Tensor& a, bool tanh_approximation = false);
[[nodiscard]] Tensor relu_backward(const Tensor& input, const Tensor& grad);
[[nodiscard]] Tensor sigmoid_backward(const Tensor& input, const Tensor& grad);
// grad * d/dx gelu(input), one fused kernel (tanh_approximation as in gelu).
[[nodiscard]] Tensor gelu_backward(const Tensor& input, const Tensor& grad,
                                   bool tanh_approximation = false);
[[nodiscard]] Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor clamp(const Tensor& a, double low, double high);
[[nodiscard]] Tensor clamp_int(const Tensor& a, std::int64_t low, std::int64_t high);
[[nodiscard]] Tensor masked_fill(const Tensor& a, const Tensor& mask, double value);
[[nodiscard]] Tensor masked_fill_int(const Tensor& a, const Tensor& mask, std::int64_t value);

// In-place forms (PyTorch's add_, +=, ...): the result is written into a's elements. It must be
// castable to a's dtype (no float into an integer tensor: TypeError); a may not be expanded.
// op names the operation in errors ("+=" from Python).
Tensor& add_(Tensor& a, const Tensor& b, const char* op = "add_");
Tensor& sub_(Tensor& a, const Tensor& b, const char* op = "sub_");
Tensor& mul_(Tensor& a, const Tensor& b, const char* op = "mul_");
Tensor& div_(Tensor& a, const Tensor& b, const char* op = "div_");
// Writes value (one element) where mask (broadcast to a's shape) is true.
Tensor& masked_fill_(Tensor& a, const Tensor& mask, const Tensor& value);

// Rounding. Integer tensors pass through (a copy), bool is a TypeError; round is half to even
// and with decimals rounds x * 10^decimals (as torch.round(decimals=)). frac(x) = x - trunc(x)
// takes floats only. Gradients are zero (frac's is the incoming one).
// floor, ceil, trunc and their in-place forms (kael/op_rows.h).
#define KAEL_DECLARE_ROUNDING(name, OP)         \
    [[nodiscard]] Tensor name(const Tensor& a); \
    Tensor& name##_(Tensor& a);
KAEL_ROUNDING_FUNCTIONS(KAEL_DECLARE_ROUNDING)
#undef KAEL_DECLARE_ROUNDING
[[nodiscard]] Tensor round(const Tensor& a, std::int64_t decimals = 0);
[[nodiscard]] Tensor frac(const Tensor& a);

// Division family, promoting as add (int with float gives float; bool with bool is a
// TypeError). fmod's result has the dividend's sign, remainder's the divisor's (Python's %),
// floor_divide floors (Python's //). Integer division by zero gives 0 (numpy's result, as kael's
// div: PyTorch's cpu raises, which would synchronise every device on each call).
[[nodiscard]] Tensor fmod(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor remainder(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor floor_divide(const Tensor& a, const Tensor& b);

// Classification, writing bool: integer and bool inputs are never NaN or infinite.
// isnan, isinf, isfinite, isposinf, isneginf (kael/op_rows.h).
#define KAEL_DECLARE_CLASSIFY(name, OP, INTEGERS) [[nodiscard]] Tensor name(const Tensor& a);
KAEL_CLASSIFY_FUNCTIONS(KAEL_DECLARE_CLASSIFY)
#undef KAEL_DECLARE_CLASSIFY
// NaN, +inf and -inf replaced: by 0, and by the dtype's largest and lowest finite values unless
// given. Integer tensors pass through.
[[nodiscard]] Tensor nan_to_num(const Tensor& a, double nan = 0.0,
                                std::optional<double> posinf = std::nullopt,
                                std::optional<double> neginf = std::nullopt);

// Math on floats (integer and bool inputs compute in f32), and in place: exp, log, sqrt, rsqrt,
// sin, cos, tanh, sigmoid, reciprocal, log1p, expm1, erf, erfc, log2, log10, exp2
// (kael/op_rows.h).
#define KAEL_DECLARE_UNARY(name, OP)  \
    [[nodiscard]] Tensor name(const Tensor& a); \
    Tensor& name##_(Tensor& a);
KAEL_FLOAT_MATH_FUNCTIONS(KAEL_DECLARE_UNARY)
// Numeric, in a's dtype (bool computes in i64), and in place: abs, sign, square, relu.
KAEL_NUMERIC_UNARY_FUNCTIONS(KAEL_DECLARE_UNARY)
#undef KAEL_DECLARE_UNARY
// x * sigmoid(x) on floats (TypeError otherwise, as PyTorch); silu_backward is its fused
// gradient, grad * d/dx silu(input).
[[nodiscard]] Tensor silu(const Tensor& a);
[[nodiscard]] Tensor silu_backward(const Tensor& input, const Tensor& grad);

// Bitwise ops on i64 and bool (bool with bool gives bool: logical ops), floats a TypeError.
// Shifts take i64 only; a count outside [0, 64) gives 0 (left) or a >> 63 (right).
[[nodiscard]] Tensor bitwise_and(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor bitwise_or(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor bitwise_xor(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor bitwise_not(const Tensor& a);
[[nodiscard]] Tensor bitwise_left_shift(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor bitwise_right_shift(const Tensor& a, const Tensor& b);

// In-place forms, under add_'s rules (the result must be castable to a's dtype); op names the
// operation in errors ("%=" from Python).
Tensor& round_(Tensor& a, std::int64_t decimals = 0);
Tensor& frac_(Tensor& a);
Tensor& silu_(Tensor& a);
Tensor& bitwise_not_(Tensor& a);
Tensor& nan_to_num_(Tensor& a, double nan = 0.0, std::optional<double> posinf = std::nullopt,
                    std::optional<double> neginf = std::nullopt);
Tensor& fmod_(Tensor& a, const Tensor& b, const char* op = "fmod_");
Tensor& remainder_(Tensor& a, const Tensor& b, const char* op = "remainder_");
Tensor& floor_divide_(Tensor& a, const Tensor& b, const char* op = "floor_divide_");
Tensor& bitwise_and_(Tensor& a, const Tensor& b, const char* op = "bitwise_and_");
Tensor& bitwise_or_(Tensor& a, const Tensor& b, const char* op = "bitwise_or_");
Tensor& bitwise_xor_(Tensor& a, const Tensor& b, const char* op = "bitwise_xor_");
Tensor& bitwise_left_shift_(Tensor& a, const Tensor& b, const char* op = "bitwise_left_shift_");
Tensor& bitwise_right_shift_(Tensor& a, const Tensor& b, const char* op = "bitwise_right_shift_");

// Operators: % is remainder, & | ^ ~ << >> the bitwise ops (C++ has no //: floor_divide).
[[nodiscard]] Tensor operator%(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator&(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator|(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator^(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator~(const Tensor& a);
[[nodiscard]] Tensor operator<<(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator>>(const Tensor& a, const Tensor& b);

// Operators.
[[nodiscard]] Tensor operator+(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator-(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator*(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator/(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor operator-(const Tensor& a);
[[nodiscard]] Tensor operator+(const Tensor& a, double b);
[[nodiscard]] Tensor operator-(const Tensor& a, double b);
[[nodiscard]] Tensor operator*(const Tensor& a, double b);
[[nodiscard]] Tensor operator/(const Tensor& a, double b);
[[nodiscard]] Tensor operator+(double a, const Tensor& b);
[[nodiscard]] Tensor operator*(double a, const Tensor& b);

// In-place forms with alpha and the composed ones (write_into's rules: castable result, no
// leaf that requires grad).
Tensor& add_(Tensor& a, const Tensor& b, double alpha, const char* op);
Tensor& sub_(Tensor& a, const Tensor& b, double alpha, const char* op);
Tensor& pow_(Tensor& a, const Tensor& exponent);
// The unary in-place forms; name is PyTorch's ("neg_", "abs_", "exp_", "log_", "sqrt_",
// "sigmoid_", "tanh_", "relu_"), ValueError for any other.
Tensor& unary_(Tensor& a, const std::string& name);
// Undefined bounds are absent; bounds broadcast to a's shape.
Tensor& clamp_(Tensor& a, const Tensor& min, const Tensor& max);

[[nodiscard]] Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
Tensor& lerp_(Tensor& start, const Tensor& end, const Tensor& weight);
[[nodiscard]] Tensor addcmul(const Tensor& a, const Tensor& t1, const Tensor& t2, double value);
[[nodiscard]] Tensor addcdiv(const Tensor& a, const Tensor& t1, const Tensor& t2, double value);
Tensor& addcmul_(Tensor& a, const Tensor& t1, const Tensor& t2, double value);
Tensor& addcdiv_(Tensor& a, const Tensor& t1, const Tensor& t2, double value);

// The dtype a binary op of a and b computes in, as torch.result_type: dimensioned tensors
// decide unless a 0-d one is of a higher category (bool < integer < floating), so an int8
// tensor plus a 0-d int64 stays int8 and a bf16 one times a 0-d f32 stays bf16.
[[nodiscard]] DType result_type(const Tensor& a, const Tensor& b);

// A 0-d tensor of value (dtype, on device), shared: each thread keeps its last few, since the
// same numbers recur in every step of a model (`tensor op number`), and a fresh one costs an
// allocation and a fill (a kernel on a GPU). For operands only (as the Python operators pass
// numbers): never write to it.
[[nodiscard]] Tensor cached_scalar(double value, DType dtype, const Device& device);

}  // namespace kael

#pragma once
// Elementwise ops with PyTorch's names and semantics: rounding, the division family,
// classification, more math, silu and bitwise ops, and their in-place forms. Included by ops.h.
#include <cstdint>
#include <optional>

#include "kael/tensor.h"

namespace kael {

// Rounding. Integer tensors pass through (a copy), bool is a TypeError; round is half to even
// and with decimals rounds x * 10^decimals (as torch.round(decimals=)). frac(x) = x - trunc(x)
// takes floats only. Gradients are zero (frac's is the incoming one).
[[nodiscard]] Tensor floor(const Tensor& a);
[[nodiscard]] Tensor ceil(const Tensor& a);
[[nodiscard]] Tensor round(const Tensor& a, std::int64_t decimals = 0);
[[nodiscard]] Tensor trunc(const Tensor& a);
[[nodiscard]] Tensor frac(const Tensor& a);

// Division family, promoting as add (int with float gives float; bool with bool is a
// TypeError). fmod's result has the dividend's sign, remainder's the divisor's (Python's %),
// floor_divide floors (Python's //). Integer division by zero gives 0 (numpy's result, as kael's
// div: PyTorch's cpu raises, which would synchronise every device on each call).
[[nodiscard]] Tensor fmod(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor remainder(const Tensor& a, const Tensor& b);
[[nodiscard]] Tensor floor_divide(const Tensor& a, const Tensor& b);

// Classification, writing bool: integer and bool inputs are never NaN or infinite.
[[nodiscard]] Tensor isnan(const Tensor& a);
[[nodiscard]] Tensor isinf(const Tensor& a);
[[nodiscard]] Tensor isfinite(const Tensor& a);
[[nodiscard]] Tensor isposinf(const Tensor& a);
[[nodiscard]] Tensor isneginf(const Tensor& a);
// NaN, +inf and -inf replaced: by 0, and by the dtype's largest and lowest finite values unless
// given. Integer tensors pass through.
[[nodiscard]] Tensor nan_to_num(const Tensor& a, double nan = 0.0,
                                std::optional<double> posinf = std::nullopt,
                                std::optional<double> neginf = std::nullopt);

// Math on floats (integer inputs compute in f32, as exp does).
[[nodiscard]] Tensor log1p(const Tensor& a);
[[nodiscard]] Tensor expm1(const Tensor& a);
[[nodiscard]] Tensor erf(const Tensor& a);
[[nodiscard]] Tensor erfc(const Tensor& a);
[[nodiscard]] Tensor log2(const Tensor& a);
[[nodiscard]] Tensor log10(const Tensor& a);
[[nodiscard]] Tensor exp2(const Tensor& a);
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
Tensor& floor_(Tensor& a);
Tensor& ceil_(Tensor& a);
Tensor& round_(Tensor& a, std::int64_t decimals = 0);
Tensor& trunc_(Tensor& a);
Tensor& frac_(Tensor& a);
Tensor& log1p_(Tensor& a);
Tensor& expm1_(Tensor& a);
Tensor& erf_(Tensor& a);
Tensor& erfc_(Tensor& a);
Tensor& log2_(Tensor& a);
Tensor& log10_(Tensor& a);
Tensor& exp2_(Tensor& a);
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

}  // namespace kael

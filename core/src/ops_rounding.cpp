// Rounding and classification: float kernels; integer and bool inputs are answered
// here (a copy, or a constant mask) without a kernel, as PyTorch's results for them are fixed.
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include "elementwise_run.h"
#include "in_place.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael {

namespace {

Tensor run_unary(kael_element_op op, const char* name, DType out_dtype, const Tensor& a) {
    const std::array<Tensor, 1> inputs{a};
    return detail::run_elementwise(op, name, out_dtype, a.dtype(), inputs, detail::no_params());
}

Tensor rounding(kael_element_op op, const char* name, const Tensor& a) {
    if (a.dtype() == DType::Bool) {
        throw TypeError(std::string(name) + ": not supported for bool tensors");
    }
    return is_floating(a.dtype()) ? run_unary(op, name, a.dtype(), a) : a.clone();
}

// Integers and bools are finite: value_for_integers is the answer of the op for them.
Tensor classify(kael_element_op op, const char* name, const Tensor& a, bool value_for_integers) {
    if (!is_floating(a.dtype())) {
        return full(a.shape(), value_for_integers ? 1.0 : 0.0, DType::Bool, a.device());
    }
    return run_unary(op, name, DType::Bool, a);
}

}  // namespace

// The rounding and classification rows of kael/op_rows.h.
#define KAEL_DEFINE_ROUNDING(name, OP)                                                    \
    Tensor name(const Tensor& a) { return rounding(KAEL_OP_##OP, #name, a); }              \
    Tensor& name##_(Tensor& a) { return detail::unary_in_place(a, #name "_", name); }
KAEL_ROUNDING_FUNCTIONS(KAEL_DEFINE_ROUNDING)
#undef KAEL_DEFINE_ROUNDING
#define KAEL_DEFINE_CLASSIFY(name, OP, INTEGERS) \
    Tensor name(const Tensor& a) { return classify(KAEL_OP_##OP, #name, a, INTEGERS); }
KAEL_CLASSIFY_FUNCTIONS(KAEL_DEFINE_CLASSIFY)
#undef KAEL_DEFINE_CLASSIFY
Tensor round(const Tensor& a, std::int64_t decimals) {
    if (decimals == 0 || !is_floating(a.dtype())) {
        return rounding(KAEL_OP_ROUND, "round", a);
    }
    // PyTorch's formula: rint(x * 10^d) / 10^d, or rint(x / 10^-d) * 10^-d for d < 0.
    const double scale = std::pow(10.0, static_cast<double>(std::abs(decimals)));
    const Tensor factor = detail::scalar_operand(a, scale);
    if (decimals > 0) {
        return div(rounding(KAEL_OP_ROUND, "round", mul(a, factor)), factor);
    }
    return mul(rounding(KAEL_OP_ROUND, "round", div(a, factor)), factor);
}
Tensor frac(const Tensor& a) {
    if (!is_floating(a.dtype())) {
        throw TypeError("frac: takes f32 or f64 tensors, got " + to_string(a.dtype()));
    }
    return run_unary(KAEL_OP_FRAC, "frac", a.dtype(), a);
}

Tensor nan_to_num(const Tensor& a, double nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
    if (!is_floating(a.dtype())) {
        return a.clone();
    }
    const double largest = a.dtype() == DType::F32 ? std::numeric_limits<float>::max()
                                                    : std::numeric_limits<double>::max();
    const auto constant = [&](double value) { return full({}, value, a.dtype(), a.device()); };
    Tensor out = where(isnan(a), constant(nan), a);
    out = where(isposinf(a), constant(posinf.value_or(largest)), out);
    return where(isneginf(a), constant(neginf.value_or(-largest)), out);
}

Tensor& frac_(Tensor& a) { return detail::unary_in_place(a, "frac_", frac); }
Tensor& round_(Tensor& a, std::int64_t decimals) {
    return detail::write_into(a, round(a, decimals), "round_");
}
Tensor& nan_to_num_(Tensor& a, double nan, std::optional<double> posinf,
                    std::optional<double> neginf) {
    return detail::write_into(a, nan_to_num(a, nan, posinf, neginf), "nan_to_num_");
}

}  // namespace kael

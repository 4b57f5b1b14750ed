// log1p, expm1, erf, erfc, log2, log10, exp2 and silu: float kernels (integer inputs
// compute in f32, as exp's do), and their in-place forms.
#include <array>
#include <string>

#include "elementwise_run.h"
#include "in_place.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael {

namespace {

Tensor floating_unary(kael_element_op op, const char* name, const Tensor& a) {
    const DType dtype = is_floating(a.dtype()) ? a.dtype() : DType::F32;
    const std::array<Tensor, 1> inputs{a};
    return detail::run_elementwise(op, name, dtype, dtype, inputs, detail::no_params());
}

}  // namespace

Tensor log1p(const Tensor& a) { return floating_unary(KAEL_OP_LOG1P, "log1p", a); }
Tensor expm1(const Tensor& a) { return floating_unary(KAEL_OP_EXPM1, "expm1", a); }
Tensor erf(const Tensor& a) { return floating_unary(KAEL_OP_ERF, "erf", a); }
Tensor erfc(const Tensor& a) { return floating_unary(KAEL_OP_ERFC, "erfc", a); }
Tensor log2(const Tensor& a) { return floating_unary(KAEL_OP_LOG2, "log2", a); }
Tensor log10(const Tensor& a) { return floating_unary(KAEL_OP_LOG10, "log10", a); }
Tensor exp2(const Tensor& a) { return floating_unary(KAEL_OP_EXP2, "exp2", a); }
Tensor silu(const Tensor& a) {
    if (!is_floating(a.dtype())) {
        throw TypeError("silu: takes f32 or f64 tensors, got " + to_string(a.dtype()));
    }
    return floating_unary(KAEL_OP_SILU, "silu", a);
}
Tensor silu_backward(const Tensor& input, const Tensor& grad) {
    DType dtype = promote(input.dtype(), grad.dtype());
    dtype = is_floating(dtype) ? dtype : DType::F32;
    const std::array<Tensor, 2> inputs{input, grad};
    return detail::run_elementwise(KAEL_OP_SILU_BACKWARD, "silu_backward", dtype, dtype, inputs,
                                   detail::no_params());
}

Tensor& log1p_(Tensor& a) { return detail::unary_in_place(a, "log1p_", log1p); }
Tensor& expm1_(Tensor& a) { return detail::unary_in_place(a, "expm1_", expm1); }
Tensor& erf_(Tensor& a) { return detail::unary_in_place(a, "erf_", erf); }
Tensor& erfc_(Tensor& a) { return detail::unary_in_place(a, "erfc_", erfc); }
Tensor& log2_(Tensor& a) { return detail::unary_in_place(a, "log2_", log2); }
Tensor& log10_(Tensor& a) { return detail::unary_in_place(a, "log10_", log10); }
Tensor& exp2_(Tensor& a) { return detail::unary_in_place(a, "exp2_", exp2); }
Tensor& silu_(Tensor& a) { return detail::unary_in_place(a, "silu_", silu); }

}  // namespace kael

// The float math rows (kael/op_rows.h) and silu: float kernels (integer inputs compute in f32,
// as exp's do), and their in-place forms.
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

// The float math rows of kael/op_rows.h, and their in-place forms.
#define KAEL_DEFINE_FLOAT_MATH(name, OP)                                                  \
    Tensor name(const Tensor& a) { return floating_unary(KAEL_OP_##OP, #name, a); }        \
    Tensor& name##_(Tensor& a) { return detail::unary_in_place(a, #name "_", name); }
KAEL_FLOAT_MATH_FUNCTIONS(KAEL_DEFINE_FLOAT_MATH)
#undef KAEL_DEFINE_FLOAT_MATH

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

Tensor& silu_(Tensor& a) { return detail::unary_in_place(a, "silu_", silu); }

}  // namespace kael

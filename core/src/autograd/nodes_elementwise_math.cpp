// Backward formulas of the rounding, division, math and bitwise elementwise ops (PyTorch's
// derivatives.yaml): rounding gives zero gradients, fmod and remainder reach both inputs, silu
// runs its fused backward row.
#include <numbers>

#include "kael/ops.h"
#include "record.h"

namespace kael::autograd {

namespace {

using Grads = std::vector<Tensor>;

// grad * factor(x), with x saved.
template <typename Factor>
BackwardFunction times_input_function(const Tensor& x, Factor factor) {
    return [a = saved(x), factor](const Tensor& g) { return Grads{g * factor(a.unpack())}; };
}

}  // namespace

const char* elementwise_more_name(kael_element_op op) {
    switch (op) {
        case KAEL_OP_FLOOR: return "FloorBackward";
        case KAEL_OP_CEIL: return "CeilBackward";
        case KAEL_OP_ROUND: return "RoundBackward";
        case KAEL_OP_TRUNC: return "TruncBackward";
        case KAEL_OP_FRAC: return "FracBackward";
        case KAEL_OP_FMOD: return "FmodBackward";
        case KAEL_OP_REMAINDER: return "RemainderBackward";
        case KAEL_OP_LOG1P: return "Log1PBackward";
        case KAEL_OP_EXPM1: return "Expm1Backward";
        case KAEL_OP_ERF: return "ErfBackward";
        case KAEL_OP_ERFC: return "ErfcBackward";
        case KAEL_OP_LOG2: return "Log2Backward";
        case KAEL_OP_LOG10: return "Log10Backward";
        case KAEL_OP_EXP2: return "Exp2Backward";
        case KAEL_OP_SILU: return "SiluBackward";
        default: return "NotDifferentiable";
    }
}

BackwardFunction elementwise_more_backward(kael_element_op op, const std::vector<Tensor>& inputs,
                                           const Tensor& out) {
    const Tensor& x = inputs.front();
    constexpr double kTwoOverSqrtPi = 2.0 * std::numbers::inv_sqrtpi;
    switch (op) {
        case KAEL_OP_FLOOR:
        case KAEL_OP_CEIL:
        case KAEL_OP_ROUND:
        case KAEL_OP_TRUNC: return [](const Tensor& g) { return Grads{g * 0.0}; };
        case KAEL_OP_FRAC: return [](const Tensor& g) { return Grads{g}; };
        case KAEL_OP_FMOD:
        case KAEL_OP_REMAINDER: {
            // d/db of a - b * q(a / b) is -q(a / b): trunc for fmod, floor for remainder.
            const bool grad_b = inputs[1].requires_grad();
            return [a = saved_if(grad_b, x), b = saved_if(grad_b, inputs[1]), grad_b,
                    op](const Tensor& g) {
                if (!grad_b) {
                    return Grads{g, Tensor()};
                }
                const Tensor ratio = div(a.unpack(), b.unpack());
                const Tensor quotient = op == KAEL_OP_FMOD ? trunc(ratio) : floor(ratio);
                return Grads{g, neg(g * quotient)};
            };
        }
        case KAEL_OP_LOG1P:
            return times_input_function(x, [](const Tensor& a) { return reciprocal(a + 1.0); });
        case KAEL_OP_EXPM1:
            return [y = saved(out)](const Tensor& g) { return Grads{g * (y.unpack() + 1.0)}; };
        case KAEL_OP_ERF:
            return times_input_function(x, [kTwoOverSqrtPi](const Tensor& a) {
                return exp(neg(square(a))) * kTwoOverSqrtPi;
            });
        case KAEL_OP_ERFC:
            return times_input_function(x, [kTwoOverSqrtPi](const Tensor& a) {
                return exp(neg(square(a))) * -kTwoOverSqrtPi;
            });
        case KAEL_OP_LOG2:
            return times_input_function(
                x, [](const Tensor& a) { return reciprocal(a * std::numbers::ln2); });
        case KAEL_OP_LOG10:
            return times_input_function(
                x, [](const Tensor& a) { return reciprocal(a * std::numbers::ln10); });
        case KAEL_OP_EXP2:
            return [y = saved(out)](const Tensor& g) {
                return Grads{g * y.unpack() * std::numbers::ln2};
            };
        case KAEL_OP_SILU:
            return [a = saved(x)](const Tensor& g) {
                if (is_grad_enabled()) {  // create_graph: s (1 + x (1 - s)) from composable ops
                    const Tensor input = a.unpack();
                    const Tensor s = sigmoid(input);
                    return Grads{g * s * (input * (s * -1.0 + 1.0) + 1.0)};
                }
                return Grads{silu_backward(a.unpack(), g)};
            };
        default: return nullptr;
    }
}

}  // namespace kael::autograd

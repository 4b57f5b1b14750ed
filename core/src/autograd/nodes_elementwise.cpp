// Backward formulas of the elementwise ops. Gradients come out in the broadcast shape and the
// computing dtype; the engine sums and converts them to each input's shape and dtype.
#include <cmath>
#include <numbers>

#include "kael/ops.h"
#include "record.h"

namespace kael::autograd {

namespace {

using Grads = std::vector<Tensor>;

Tensor one_minus(const Tensor& t) { return neg(t) + 1.0; }

// d gelu / dx from differentiable ops, for backward with create_graph: Phi(x) + x phi(x), or
// the tanh form's 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2), t = tanh(k (x + c x^3)).
Tensor gelu_derivative(const Tensor& x, bool tanh_approximation) {
    if (!tanh_approximation) {
        const Tensor cdf = (erf(x * std::numbers::sqrt2 / 2.0) + 1.0) * 0.5;
        return cdf + x * exp(square(x) * -0.5) * (std::numbers::inv_sqrtpi / std::numbers::sqrt2);
    }
    const double k = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
    const double c = 0.044715;
    const Tensor t = tanh((x + x * square(x) * c) * k);
    return (t + 1.0) * 0.5 + x * one_minus(square(t)) * (square(x) * (3.0 * c) + 1.0) * (0.5 * k);
}

}  // namespace

const char* elementwise_name(kael_element_op op) {
    switch (op) {
        case KAEL_OP_IDENTITY: return "CopyBackward";
        case KAEL_OP_NEGATE: return "NegBackward";
        case KAEL_OP_ABS: return "AbsBackward";
        case KAEL_OP_SIGN: return "SignBackward";
        case KAEL_OP_EXP: return "ExpBackward";
        case KAEL_OP_LOG: return "LogBackward";
        case KAEL_OP_SQRT: return "SqrtBackward";
        case KAEL_OP_RSQRT: return "RsqrtBackward";
        case KAEL_OP_SIN: return "SinBackward";
        case KAEL_OP_COS: return "CosBackward";
        case KAEL_OP_TANH: return "TanhBackward";
        case KAEL_OP_SIGMOID: return "SigmoidBackward";
        case KAEL_OP_RELU: return "ReluBackward";
        case KAEL_OP_GELU_EXACT:
        case KAEL_OP_GELU_TANH: return "GeluBackward";
        case KAEL_OP_SQUARE: return "SquareBackward";
        case KAEL_OP_RECIPROCAL: return "ReciprocalBackward";
        case KAEL_OP_PLUS: return "AddBackward";
        case KAEL_OP_MINUS: return "SubBackward";
        case KAEL_OP_MULTIPLY: return "MulBackward";
        case KAEL_OP_DIVIDE: return "DivBackward";
        case KAEL_OP_POWER: return "PowBackward";
        case KAEL_OP_MAXIMUM: return "MaximumBackward";
        case KAEL_OP_MINIMUM: return "MinimumBackward";
        case KAEL_OP_WHERE: return "WhereBackward";
        case KAEL_OP_CLAMP: return "ClampBackward";
        case KAEL_OP_MASKED_FILL: return "MaskedFillBackward";
        default: return elementwise_more_name(op);
    }
}

// Each formula saves only what it reads, and a binary op only what the gradients of its inputs
// that require grad read (as PyTorch does): writing an intermediate that no gradient reads,
// `h *= 2`, stays legal, while writing one that is read is caught by SavedTensor.
BackwardFunction elementwise_backward(kael_element_op op, const std::vector<Tensor>& inputs,
                                      const Tensor& out, const kael_element_params& params) {
    const Tensor& x = inputs.front();
    const Tensor second = inputs.size() > 1 ? inputs[1] : Tensor();
    const bool grad_a = x.requires_grad();
    const bool grad_b = second.defined() && second.requires_grad();
    switch (op) {
        case KAEL_OP_IDENTITY: return [](const Tensor& g) { return Grads{g}; };
        case KAEL_OP_NEGATE: return [](const Tensor& g) { return Grads{neg(g)}; };
        case KAEL_OP_ABS:
            return [a = saved(x)](const Tensor& g) { return Grads{g * sign(a.unpack())}; };
        case KAEL_OP_SIGN: return [](const Tensor& g) { return Grads{g * 0.0}; };
        // Saved outputs (exp, sqrt, rsqrt, tanh, reciprocal) connect to this node under
        // create_graph, so these formulas are differentiable too.
        case KAEL_OP_EXP:
            return [y = saved_output(out)](const Tensor& g) { return Grads{g * y.unpack()}; };
        case KAEL_OP_LOG:
            return [a = saved(x)](const Tensor& g) { return Grads{g / a.unpack()}; };
        case KAEL_OP_SQRT:
            return [y = saved_output(out)](const Tensor& g) {
                return Grads{g * 0.5 / y.unpack()};
            };
        case KAEL_OP_RSQRT:
            return [y_saved = saved_output(out)](const Tensor& g) {
                const Tensor y = y_saved.unpack();
                return Grads{g * (y * y * y) * -0.5};
            };
        case KAEL_OP_SIN:
            return [a = saved(x)](const Tensor& g) { return Grads{g * cos(a.unpack())}; };
        case KAEL_OP_COS:
            return [a = saved(x)](const Tensor& g) { return Grads{neg(g * sin(a.unpack()))}; };
        case KAEL_OP_TANH:
            return [y = saved_output(out)](const Tensor& g) {
                return Grads{g * one_minus(square(y.unpack()))};
            };
        // Under create_graph (grad mode on in the backward), sigmoid and relu compose their
        // gradients from differentiable ops instead of their fused backward kernels.
        case KAEL_OP_SIGMOID:
            return [a = saved(x)](const Tensor& g) {
                if (is_grad_enabled()) {
                    const Tensor s = sigmoid(a.unpack());
                    return Grads{g * s * one_minus(s)};
                }
                return Grads{sigmoid_backward(a.unpack(), g)};
            };
        case KAEL_OP_RELU:
            return [a = saved(x)](const Tensor& g) {
                if (is_grad_enabled()) {
                    const Tensor input = a.unpack();
                    return Grads{where(gt(input, zero_scalar(input)), g, zero_scalar(g))};
                }
                return Grads{relu_backward(a.unpack(), g)};
            };
        case KAEL_OP_GELU_EXACT:
        case KAEL_OP_GELU_TANH:
            return [a = saved(x), tanh_approximation = op == KAEL_OP_GELU_TANH](const Tensor& g) {
                if (is_grad_enabled()) {
                    return Grads{g * gelu_derivative(a.unpack(), tanh_approximation)};
                }
                return Grads{gelu_backward(a.unpack(), g, tanh_approximation)};
            };
        case KAEL_OP_SQUARE:
            return [a = saved(x)](const Tensor& g) { return Grads{g * a.unpack() * 2.0}; };
        case KAEL_OP_RECIPROCAL:
            return [y = saved_output(out)](const Tensor& g) {
                return Grads{neg(g * square(y.unpack()))};
            };
        case KAEL_OP_PLUS: return [](const Tensor& g) { return Grads{g, g}; };
        case KAEL_OP_MINUS: return [](const Tensor& g) { return Grads{g, neg(g)}; };
        case KAEL_OP_MULTIPLY:
            return [a = saved_if(grad_b, x), b = saved_if(grad_a, second), grad_a,
                    grad_b](const Tensor& g) {
                return Grads{grad_a ? g * b.unpack() : Tensor(),
                             grad_b ? g * a.unpack() : Tensor()};
            };
        case KAEL_OP_DIVIDE:
            // d/db (a / b) = -g a / b^2, from the saved inputs (an output saved before its node
            // exists carries no gradient edge, which create_graph needs).
            return [b_saved = saved(second), a = saved_if(grad_b, x), grad_b](const Tensor& g) {
                const Tensor b = b_saved.unpack();
                const Tensor grad_a = g / b;
                return Grads{grad_a, grad_b ? neg(grad_a * a.unpack() / b) : Tensor()};
            };
        case KAEL_OP_POWER:
            return [a_saved = saved(x), b_saved = saved(second), y_saved = saved(out),
                    grad_a, grad_b](const Tensor& g) {
                const Tensor y = y_saved.unpack();
                // In the dtype the forward computed in, so an f64 operand's gradient does not
                // go through log or pow in its f32 partner's precision.
                const Tensor a = a_saved.unpack().to(y.dtype());
                const Tensor b = b_saved.unpack().to(y.dtype());
                // Where the base is 0, y * log(a) is 0 * -inf: its limit for b > 0 is 0.
                // Under create_graph, a ** b again: the saved output has no gradient edge.
                const Tensor power = grad_b && is_grad_enabled() ? pow(a, b) : y;
                return Grads{grad_a ? g * b * pow(a, b - 1.0) : Tensor(),
                             grad_b ? where(eq(a, zero_scalar(a)), zero_scalar(g),
                                            g * power * log(a))
                                    : Tensor()};
            };
        case KAEL_OP_MAXIMUM:
        case KAEL_OP_MINIMUM:
            return [a_saved = saved(x), b_saved = saved(second), op](const Tensor& g) {
                // The chosen operand takes the gradient; ties split it evenly.
                const Tensor a = a_saved.unpack();
                const Tensor b = b_saved.unpack();
                const Tensor a_wins = op == KAEL_OP_MAXIMUM ? gt(a, b) : lt(a, b);
                const Tensor tie = eq(a, b);
                const Tensor half = g * 0.5;
                const Tensor zero = zero_scalar(g);
                return Grads{where(a_wins, g, where(tie, half, zero)),
                             where(logical_or(a_wins, tie), where(tie, half, zero), g)};
            };
        case KAEL_OP_WHERE:
            return [condition_saved = saved(x)](const Tensor& g) {
                const Tensor condition = condition_saved.unpack();
                const Tensor zero = zero_scalar(g);
                return Grads{Tensor(), where(condition, g, zero), where(condition, zero, g)};
            };
        case KAEL_OP_CLAMP:
            return [a_saved = saved(x), low = params.reals[0],
                    high = params.reals[1]](const Tensor& g) {
                const Tensor a = a_saved.unpack();
                const Tensor inside = logical_and(ge(a, full({}, low, a.dtype(), a.device())),
                                                  le(a, full({}, high, a.dtype(), a.device())));
                return Grads{where(inside, g, zero_scalar(g))};
            };
        case KAEL_OP_MASKED_FILL:
            return [mask = saved(second)](const Tensor& g) {
                return Grads{masked_fill(g, mask.unpack(), 0.0), Tensor()};
            };
        default: return elementwise_more_backward(op, inputs, out);
    }
}

}  // namespace kael::autograd

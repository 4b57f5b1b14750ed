// clip_grad_norm_ and clip_grad_value_: the grads are rewritten in place under no-grad.
#include "kael/clip_grad.h"

#include <cmath>
#include <limits>
#include <string>

#include "kael/autograd.h"
#include "kael/ops.h"

namespace kael::nn {

namespace {

std::vector<Tensor> defined_grads(const std::vector<Tensor>& parameters, const char* op) {
    std::vector<Tensor> grads;
    for (const Tensor& parameter : parameters) {
        Tensor grad = parameter.grad();
        if (!grad.defined()) {
            continue;
        }
        if (!grads.empty() && grad.device() != grads.front().device()) {
            throw ValueError(std::string(op) + ": gradients are on " +
                             grads.front().device().str() + " and " + grad.device().str() +
                             "; clip each device's parameters separately");
        }
        grads.push_back(grad);
    }
    return grads;
}

// One gradient's norm, in float32 at least (a float64 grad keeps float64).
Tensor grad_norm(const Tensor& grad, double norm_type) {
    const Tensor values = grad.dtype() == DType::F64 ? grad : grad.to(DType::F32);
    if (std::isinf(norm_type)) {
        return max(abs(values));
    }
    if (norm_type == 2.0) {
        return sqrt(sum(square(values)));
    }
    if (norm_type == 1.0) {
        return sum(abs(values));
    }
    const Tensor p = scalar_tensor(norm_type, values.dtype(), values.device());
    return pow(sum(pow(abs(values), p)), scalar_tensor(1 / norm_type, values.dtype(),
                                                       values.device()));
}

}  // namespace

Tensor clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
    if (!(norm_type > 0)) {
        throw ValueError("clip_grad_norm_: norm_type must be positive or inf, got " +
                         std::to_string(norm_type));
    }
    const NoGradGuard guard;
    const std::vector<Tensor> grads = defined_grads(parameters, "clip_grad_norm_");
    if (grads.empty()) {
        return scalar_tensor(0.0, DType::F32);
    }
    std::vector<Tensor> norms;
    norms.reserve(grads.size());
    for (const Tensor& grad : grads) {
        norms.push_back(grad_norm(grad, norm_type));
    }
    // The norm of the per-tensor norms is the norm of all elements together.
    const Tensor total = norms.size() == 1 ? norms.front() : grad_norm(stack(norms), norm_type);
    if (error_if_nonfinite) {
        const double value = total.item_double();
        if (!std::isfinite(value)) {
            throw ValueError("clip_grad_norm_: the total norm of order " +
                             std::to_string(norm_type) + " of the gradients is non-finite (" +
                             std::to_string(value) +
                             "), so it cannot be clipped; pass error_if_nonfinite=False to "
                             "scale them anyway");
        }
    }
    const Tensor limit = scalar_tensor(max_norm, total.dtype(), total.device());
    const Tensor scale = clamp(limit / (total + 1e-6), -std::numeric_limits<double>::infinity(), 1.0);
    for (const Tensor& grad : grads) {
        Tensor target = grad;
        target.copy_(grad * scale.to(grad.dtype()));
    }
    return total;
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
    const NoGradGuard guard;
    for (Tensor grad : defined_grads(parameters, "clip_grad_value_")) {
        grad.copy_(clamp(grad, -clip_value, clip_value));
    }
}

}  // namespace kael::nn

// Updates run under no-grad and write into each parameter's own storage with copy_.
#include "kael/optim.h"

#include <cmath>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "../kernel_calls.h"

namespace kael::optim {

namespace {

// Optimizer state lives where its parameter lives: Module::to (or move_to_) between steps
// moves the parameter, and the state follows at the next step.
void follow_parameter(Tensor& state, const Tensor& parameter) {
    if (state.defined() && state.device() != parameter.device()) {
        state = state.to(parameter.device());
    }
}

// The fused kernel takes contiguous float tensors of one dtype; anything else (a strided
// parameter, a grad of another dtype, moments made by the composed path) is composed.
bool fused_step_applies(const Tensor& parameter, const Tensor& grad, const Tensor& m,
                        const Tensor& v) {
    const auto matches = [&](const Tensor& t) {
        return t.dtype() == parameter.dtype() && t.shape() == parameter.shape() &&
               t.is_contiguous() && t.device() == parameter.device();
    };
    return is_floating(parameter.dtype()) && parameter.is_contiguous() && matches(grad) &&
           (!m.defined() || (matches(m) && matches(v)));
}

}  // namespace

Optimizer::Optimizer(std::vector<Tensor> parameters) : parameters_(std::move(parameters)) {
    for (const Tensor& parameter : parameters_) {
        if (!parameter.requires_grad()) {
            throw ValueError("optimizer: every parameter must require grad");
        }
    }
}

void Optimizer::zero_grad() {
    for (const Tensor& parameter : parameters_) {
        parameter.set_grad(Tensor());
    }
}

SGD::SGD(std::vector<Tensor> parameters, double lr, double momentum, double weight_decay)
    : Optimizer(std::move(parameters)), lr_(lr), momentum_(momentum), weight_decay_(weight_decay) {
    if (!(lr >= 0 && momentum >= 0 && weight_decay >= 0)) {  // NaN fails too
        throw ValueError("SGD: lr, momentum and weight_decay must be non-negative");
    }
    velocity_.resize(parameters_.size());
}

void SGD::step() {
    const NoGradGuard guard;
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
        Tensor parameter = parameters_[i];
        Tensor grad = parameter.grad();
        if (!grad.defined()) {
            continue;
        }
        if (weight_decay_ != 0) {
            grad = grad + parameter.detach() * weight_decay_;
        }
        if (momentum_ != 0) {
            follow_parameter(velocity_[i], parameter);
            velocity_[i] = velocity_[i].defined() ? velocity_[i] * momentum_ + grad : grad.clone();
            grad = velocity_[i];
        }
        parameter.copy_(parameter.detach() - grad * lr_);
    }
}

Adam::Adam(std::vector<Tensor> parameters, double lr, double beta1, double beta2, double eps,
           double weight_decay, bool decoupled_weight_decay)
    : Optimizer(std::move(parameters)),
      lr_(lr),
      beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      weight_decay_(weight_decay),
      decoupled_(decoupled_weight_decay) {
    if (!(lr >= 0 && beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1 && eps >= 0 &&
          weight_decay >= 0)) {
        throw ValueError("Adam: need lr >= 0, 0 <= beta < 1, eps >= 0 and weight_decay >= 0");
    }
    steps_.resize(parameters_.size(), 0);
    first_moment_.resize(parameters_.size());
    second_moment_.resize(parameters_.size());
}

void Adam::step() {
    const NoGradGuard guard;
    std::vector<detail::AdamTensors> fused;  // stepped together at the end: few launches
    for (std::size_t i = 0; i < parameters_.size(); ++i) {
        Tensor parameter = parameters_[i];
        Tensor grad = parameter.grad();
        if (!grad.defined()) {
            continue;
        }
        const auto step = static_cast<double>(++steps_[i]);
        const double first_correction = 1 - std::pow(beta1_, step);
        const double second_correction = 1 - std::pow(beta2_, step);
        Tensor& m = first_moment_[i];
        Tensor& v = second_moment_[i];
        follow_parameter(m, parameter);
        follow_parameter(v, parameter);
        if (fused_step_applies(parameter, grad, m, v)) {
            if (!m.defined()) {
                m = zeros(parameter.shape(), parameter.dtype(), parameter.device());
                v = zeros(parameter.shape(), parameter.dtype(), parameter.device());
            }
            kael_adam_params params{};
            params.struct_size = sizeof(params);
            params.lr = lr_;
            params.beta1 = beta1_;
            params.beta2 = beta2_;
            params.eps = eps_;
            params.weight_decay = weight_decay_;
            params.first_correction = first_correction;
            params.second_correction = second_correction;
            params.decoupled = decoupled_ ? 1 : 0;
            fused.push_back({parameter, m, v, grad, params});
            continue;
        }
        Tensor value = parameter.detach();
        if (weight_decay_ != 0 && decoupled_) {
            value = value * (1 - lr_ * weight_decay_);
        } else if (weight_decay_ != 0) {
            grad = grad + value * weight_decay_;
        }
        m = m.defined() ? m * beta1_ + grad * (1 - beta1_) : grad * (1 - beta1_);
        v = v.defined() ? v * beta2_ + square(grad) * (1 - beta2_) : square(grad) * (1 - beta2_);
        const Tensor update = (m / first_correction) / (sqrt(v / second_correction) + eps_);
        parameter.copy_(value - update * lr_);
    }
    detail::adam_many(fused);
}

}  // namespace kael::optim

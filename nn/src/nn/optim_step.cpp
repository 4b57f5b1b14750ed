// The functional optimizer steps: updates run under no-grad and write into each parameter's
// (and buffer's) own storage, so every handle to them sees the step.
#include <cmath>
#include <map>

#include "kael/autograd.h"
#include "kael/ops.h"
#include "kael/optim.h"
#include "kernel_calls.h"

namespace kael::optim {

namespace {

// The fused kernel takes contiguous float tensors of one dtype; anything else (a strided
// parameter, a grad of another dtype) is composed.
bool fused_step_applies(const Tensor& parameter, const Tensor& grad, const Tensor& m,
                        const Tensor& v) {
    const auto matches = [&](const Tensor& t) {
        return t.dtype() == parameter.dtype() && t.shape() == parameter.shape() &&
               t.is_contiguous() && t.device() == parameter.device();
    };
    return is_floating(parameter.dtype()) && parameter.is_contiguous() && matches(grad) &&
           matches(m) && matches(v);
}

// The checks every Adam step makes of a parameter's moments.
void check_moments(const Tensor& parameter, const Tensor& m, const Tensor& v, const char* op) {
    if (!m.defined() || !v.defined() || m.shape() != parameter.shape() ||
        v.shape() != parameter.shape() || m.device() != parameter.device() ||
        v.device() != parameter.device()) {
        throw ValueError(std::string(op) + ": exp_avg and exp_avg_sq must be tensors of each "
                                           "parameter's shape on its device");
    }
}

// The update composed of ops, for layouts the fused kernel does not take; lr and the
// corrections are numbers or (on the device path) one-element tensors.
template <typename Factor>
void composed_adam(Tensor parameter, Tensor grad, Tensor m, Tensor v, const Factor& lr,
                   const Factor& first_correction, const Factor& second_correction,
                   const AdamHyper& hyper) {
    Tensor value = parameter.detach();
    if (hyper.weight_decay != 0 && hyper.decoupled) {
        value = value - value * (lr * hyper.weight_decay);
    } else if (hyper.weight_decay != 0) {
        grad = grad + value * hyper.weight_decay;
    }
    m.copy_(m * hyper.beta1 + grad * (1 - hyper.beta1));
    v.copy_(v * hyper.beta2 + square(grad) * (1 - hyper.beta2));
    const Tensor update = (m / first_correction) / (sqrt(v / second_correction) + hyper.eps);
    parameter.copy_(value - update * lr);
}

void check_lists(const char* op, std::size_t count, std::initializer_list<std::size_t> sizes) {
    for (const std::size_t size : sizes) {
        if (size != count) {
            throw ValueError(std::string(op) + ": every list must have one entry per parameter");
        }
    }
}

}  // namespace

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, const SGDHyper& hyper) {
    check_lists("sgd_step", params.size(), {grads.size(), momentum_buffers.size()});
    const NoGradGuard guard;
    for (std::size_t i = 0; i < params.size(); ++i) {
        Tensor parameter = params[i];
        Tensor grad = grads[i];
        if (hyper.weight_decay != 0) {
            grad = grad + parameter.detach() * hyper.weight_decay;
        }
        if (hyper.momentum != 0) {
            Tensor& buffer = momentum_buffers[i];
            if (!buffer.defined()) {
                buffer = grad.clone();
            } else {
                if (buffer.device() != parameter.device()) {
                    throw ValueError("sgd_step: a momentum buffer is on " +
                                     buffer.device().str() + ", its parameter on " +
                                     parameter.device().str());
                }
                // A new buffer rather than copy_ into the old one: one pass fewer per step.
                buffer = buffer * hyper.momentum +
                         (hyper.dampening == 0 ? grad : grad * (1 - hyper.dampening));
            }
            grad = hyper.nesterov ? grad + buffer * hyper.momentum : buffer;
        }
        parameter.copy_(parameter.detach() - grad * hyper.lr);
    }
}

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<std::int64_t>& steps, const AdamHyper& hyper) {
    check_lists("adam_step", params.size(),
                {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), steps.size()});
    const NoGradGuard guard;
    std::vector<detail::AdamTensors> fused;  // stepped together at the end: few launches
    for (std::size_t i = 0; i < params.size(); ++i) {
        Tensor parameter = params[i];
        Tensor grad = grads[i];
        Tensor m = exp_avgs[i];
        Tensor v = exp_avg_sqs[i];
        check_moments(parameter, m, v, "adam_step");
        const auto step = static_cast<double>(steps[i]);
        const double first_correction = 1 - std::pow(hyper.beta1, step);
        const double second_correction = 1 - std::pow(hyper.beta2, step);
        if (fused_step_applies(parameter, grad, m, v)) {
            kael_adam_params params{};
            params.struct_size = sizeof(params);
            params.lr = hyper.lr;
            params.beta1 = hyper.beta1;
            params.beta2 = hyper.beta2;
            params.eps = hyper.eps;
            params.weight_decay = hyper.weight_decay;
            params.first_correction = first_correction;
            params.second_correction = second_correction;
            params.decoupled = hyper.decoupled ? 1 : 0;
            fused.push_back({parameter, m, v, grad, params, Tensor{}});
            continue;
        }
        composed_adam(parameter, grad, m, v, hyper.lr, first_correction, second_correction,
                      hyper);
    }
    detail::adam_many(fused);
}

void adam_step_on_device(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                         const std::vector<Tensor>& exp_avgs,
                         const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& counts,
                         const Tensor& lr, const AdamHyper& hyper) {
    check_lists("adam_step_on_device", params.size(),
                {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), counts.size()});
    const NoGradGuard guard;
    // Per count tensor: incremented once, then lr and both corrections as 3 f64 on its device
    // (1 - beta^t as -expm1(t log beta), which keeps its digits when beta^t is near 1).
    std::map<const void*, Tensor> factors_of;
    std::vector<detail::AdamTensors> fused;
    for (std::size_t i = 0; i < params.size(); ++i) {
        Tensor parameter = params[i];
        Tensor m = exp_avgs[i];
        Tensor v = exp_avg_sqs[i];
        check_moments(parameter, m, v, "adam_step_on_device");
        Tensor count = counts[i];
        if (!count.defined() || count.dim() != 0 || !is_floating(count.dtype()) ||
            count.device() != parameter.device()) {
            throw ValueError("adam_step_on_device: each step count must be a 0-d floating "
                             "tensor on its parameter's device");
        }
        Tensor& factors = factors_of[&count.impl()];
        if (!factors.defined()) {
            count.copy_(count + 1.0);
            const Tensor t = (count.dtype() == DType::F64 ? count : count.to(DType::F64)).reshape({1});
            const Tensor rate = lr.defined() ? lr.to(parameter.device()).to(DType::F64).reshape({1})
                                             : full({1}, hyper.lr, DType::F64, parameter.device());
            factors = cat({rate, -expm1(t * std::log(hyper.beta1)),
                           -expm1(t * std::log(hyper.beta2))});
        }
        if (fused_step_applies(parameter, grads[i], m, v) &&
            detail::reads_adam_factors(parameter.device())) {
            kael_adam_params call{};
            call.struct_size = sizeof(call);
            call.lr = hyper.lr;  // the factors replace lr and the corrections
            call.beta1 = hyper.beta1;
            call.beta2 = hyper.beta2;
            call.eps = hyper.eps;
            call.weight_decay = hyper.weight_decay;
            call.first_correction = call.second_correction = 1;
            call.decoupled = hyper.decoupled ? 1 : 0;
            fused.push_back({parameter, m, v, grads[i], call, factors});
            continue;
        }
        const auto part = [&](std::int64_t k) {
            return factors.slice(0, k, k + 1).to(parameter.dtype());
        };
        composed_adam(parameter, grads[i], m, v, part(0), part(1), part(2), hyper);
    }
    detail::adam_many(fused);
}

}  // namespace kael::optim

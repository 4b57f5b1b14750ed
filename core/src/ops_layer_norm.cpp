// layer_norm over the last dimension: one fused kernel call forward (saving each row's mean and
// rstd) and one backward, which computes only the gradients the inputs need.
#include <string>

#include "autograd/record.h"
#include "kael/autocast.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael {

namespace {

void check_parameter(const Tensor& x, const Tensor& parameter) {
    if (!parameter.defined()) {
        return;
    }
    detail::check_same_device({x, parameter}, "layer_norm");
    if (parameter.shape() != Shape{x.size(-1)}) {
        throw ValueError("layer_norm: expected weight and bias of shape " +
                         to_string(Shape{x.size(-1)}) + " for input " + to_string(x.shape()) +
                         ", got " + to_string(parameter.shape()));
    }
}

// parameter converted to dtype and made contiguous (recorded, so gradients flow back), or none.
Tensor prepared(const Tensor& parameter, DType dtype) {
    return parameter.defined() ? parameter.to(dtype).contiguous() : Tensor();
}

std::int64_t leading_size(const Tensor& x) {
    std::int64_t rows = 1;
    for (std::int64_t d = 0; d + 1 < x.dim(); ++d) {
        rows *= x.size(d);
    }
    return rows;
}

// The gradients from differentiable ops (backward under create_graph): the statistics are
// recomputed from x, since those the kernel saved carry no gradient.
std::vector<Tensor> composed_gradients(const Tensor& grad, const Tensor& x, const Tensor& weight,
                                       double eps, bool want_x, bool want_weight,
                                       bool want_bias) {
    const std::int64_t columns = x.size(-1);
    const Shape last{-1};
    const Tensor centered = x - mean(x, last, true);
    const Tensor rstd = rsqrt(mean(centered * centered, last, true) + eps);
    const Tensor normalized = centered * rstd;
    std::vector<Tensor> grads;
    if (want_x) {
        const Tensor scaled = weight.defined() ? grad * weight : grad;
        grads.push_back(rstd * (scaled - mean(scaled, last, true) -
                                normalized * mean(scaled * normalized, last, true)));
    } else {
        grads.emplace_back();
    }
    if (weight.defined()) {
        grads.push_back(want_weight ? sum((grad * normalized).reshape({-1, columns}), 0)
                                    : Tensor());
    }
    grads.push_back(want_bias ? sum(grad.reshape({-1, columns}), 0) : Tensor());
    return grads;
}

autograd::BackwardFunction layer_norm_backward(const Tensor& x, const Tensor& mean,
                                               const Tensor& rstd, const Tensor& weight,
                                               const Tensor& bias, double eps) {
    const bool want_x = x.requires_grad();
    const bool want_weight = weight.defined() && weight.requires_grad();
    const bool want_bias = bias.defined() && bias.requires_grad();
    // The slot reads x, mean and rstd whatever it computes; weight only for grad_x.
    return [x_saved = autograd::saved(x), mean_saved = autograd::saved(mean),
            rstd_saved = autograd::saved(rstd), weight_saved = autograd::saved_if(want_x, weight), shape = x.shape(),
            has_weight = weight.defined(), has_bias = bias.defined(), want_x, want_weight,
            want_bias, eps](const Tensor& grad_in) {
        if (is_grad_enabled()) {
            std::vector<Tensor> grads =
                composed_gradients(grad_in, x_saved.unpack(), weight_saved.unpack(), eps, want_x,
                                   want_weight, want_bias);
            if (!has_bias) {
                grads.pop_back();
            }
            return grads;
        }
        const Tensor grad = grad_in.contiguous();
        const std::int64_t columns = shape.back();
        const std::int64_t rows = columns == 0 ? 0 : grad.numel() / columns;
        const DType dtype = grad.dtype();
        const Device device = grad.device();
        const Tensor grad_x = want_x ? empty(shape, dtype, device) : Tensor();
        const Tensor grad_weight = want_weight ? empty({columns}, dtype, device) : Tensor();
        const Tensor grad_bias = want_bias ? empty({columns}, dtype, device) : Tensor();
        detail::layer_norm_backward(grad_x, grad_weight, grad_bias, grad, x_saved.unpack(),
                                    mean_saved.unpack(), rstd_saved.unpack(),
                                    weight_saved.unpack(),
                                    rows, columns);
        std::vector<Tensor> grads{grad_x};
        if (has_weight) {
            grads.push_back(grad_weight);
        }
        if (has_bias) {
            grads.push_back(grad_bias);
        }
        return grads;
    };
}

}  // namespace

Tensor layer_norm(const Tensor& input, const Tensor& weight_in, const Tensor& bias_in, double eps) {
    if (const auto cast = autocast::full({input, weight_in, bias_in})) {
        const autocast::Applied applied;
        return layer_norm((*cast)[0], (*cast)[1], (*cast)[2], eps);
    }
    if (!is_floating(input.dtype())) {
        throw TypeError("layer_norm: expected input of a floating dtype, got " +
                        to_string(input.dtype()));
    }
    if (input.dim() == 0) {
        throw ValueError("layer_norm: expected at least one dimension, got a 0-d tensor");
    }
    check_parameter(input, weight_in);
    check_parameter(input, bias_in);
    DType dtype = input.dtype();
    for (const Tensor* parameter : {&weight_in, &bias_in}) {
        dtype = parameter->defined() ? promote(dtype, parameter->dtype()) : dtype;
    }
    const Tensor x = input.to(dtype).contiguous();
    const Tensor weight = prepared(weight_in, dtype);
    const Tensor bias = prepared(bias_in, dtype);
    std::vector<Tensor> inputs{x};
    for (const Tensor* parameter : {&weight, &bias}) {
        if (parameter->defined()) {
            inputs.push_back(*parameter);
        }
    }
    const autograd::Recording recording(inputs);
    const std::int64_t rows = leading_size(x);
    const std::int64_t columns = x.size(-1);
    Tensor out = empty(x.shape(), dtype, x.device());
    const Tensor mean = empty({rows}, detail::stats_dtype(dtype), x.device());
    const Tensor rstd = empty({rows}, detail::stats_dtype(dtype), x.device());
    detail::layer_norm(out, mean, rstd, x, weight, bias, rows, columns, eps);
    if (!recording.active()) {
        return out;
    }
    return recording.finish(out, "LayerNormBackward",
                            layer_norm_backward(x, mean, rstd, weight, bias, eps));
}

}  // namespace kael

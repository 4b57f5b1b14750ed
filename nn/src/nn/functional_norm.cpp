// Batch and group normalisation (nn_conv.h): training batch norm on the plugin's per-channel
// kernels where it has them (channel_norms_plugin.cpp), else, as group norm, on the fused
// layer_norm kernel: a channel's values over the batch (or a sample's group) are one row.
#include <utility>

#include "kael/autograd.h"
#include "kael/nn_conv.h"
#include "kael/nn_functional.h"
#include "nn_internal.h"

namespace kael::nn::functional {

namespace {

// Training-mode batch normalisation from ops: each channel's values as one row [C, N * positions],
// normalised by the fused layer_norm kernel (forward and backward), then laid back as [N, C, *].
Tensor normalized_by_rows(const Tensor& input, const Tensor& weight, const Tensor& bias,
                          double eps) {
    const std::int64_t channels = input.size(1);
    Shape rows_shape = input.shape();
    std::swap(rows_shape[0], rows_shape[1]);
    const Tensor rows = input.transpose(0, 1).reshape({channels, -1});
    Tensor normal = layer_norm(rows, {rows.size(1)}, Tensor(), Tensor(), eps);
    if (weight.defined()) {  // per channel: per row here, where the rows are contiguous
        normal = normal * weight.reshape({channels, 1});
    }
    if (bias.defined()) {
        normal = normal + bias.reshape({channels, 1});
    }
    return normal.reshape(rows_shape).transpose(0, 1).contiguous();
}

// input * scale[c] + shift[c] over dim 1 (either undefined: none): the plugin's per-channel
// map where it has one, else a multiply and an add.
Tensor scaled_by_channel(const Tensor& input, const Tensor& scale, const Tensor& shift) {
    if (!scale.defined() && !shift.defined()) {
        return input;
    }
    if (Tensor fused = detail::plugin_channel_affine(input, scale, shift); fused.defined()) {
        return fused;
    }
    Shape view(static_cast<std::size_t>(input.dim()), 1);
    view[1] = input.size(1);
    Tensor result = scale.defined() ? input * scale.reshape(view) : input;
    return shift.defined() ? result + shift.reshape(view) : result;
}

}  // namespace

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight, const Tensor& bias, bool training, double momentum,
                  double eps) {
    if (input.dim() < 2) {
        throw ValueError("batch_norm: expected an input of at least 2 dims, got " +
                         to_string(input.shape()));
    }
    const std::int64_t channels = input.size(1);
    Shape view(static_cast<std::size_t>(input.dim()), 1);
    view[1] = channels;
    if (training || !running_mean.defined()) {
        const std::int64_t per_channel = channels == 0 ? 0 : input.numel() / channels;
        if (training && per_channel <= 1) {
            throw ValueError(
                "batch_norm: expected more than 1 value per channel when training, "
                "got input " +
                to_string(input.shape()));
        }
        const bool has_weight = weight.defined();
        const bool has_bias = bias.defined();
        const auto composed = [has_weight, has_bias, eps](const std::vector<Tensor>& inputs) {
            return normalized_by_rows(inputs[0], has_weight ? inputs[1] : Tensor(),
                                      has_bias ? inputs[has_weight ? 2 : 1] : Tensor(), eps);
        };
        const Tensor moving_mean = training ? running_mean : Tensor();
        const Tensor moving_var = training ? running_var : Tensor();
        if (Tensor fused = detail::plugin_batch_norm(input, moving_mean, moving_var, weight, bias,
                                                     momentum, eps, composed);
            fused.defined()) {
            return fused;
        }
        if (training && running_mean.defined()) {
            const NoGradGuard no_grad;
            // bf16/f16 statistics in f32, as the per-channel kernels keep them.
            Tensor values = input.detach().transpose(0, 1).reshape({channels, -1});
            if (is_low_precision(values.dtype())) {
                values = values.to(DType::F32);
            }
            Tensor update_mean = running_mean;
            Tensor update_var = running_var;
            update_mean.copy_(update_mean * (1.0 - momentum) + mean(values, 1) * momentum);
            update_var.copy_(update_var * (1.0 - momentum) + var(values, Shape{1}, 1) * momentum);
        }
        return normalized_by_rows(input, weight, bias, eps);
    }
    // Evaluation: one per-channel scale and shift from the running statistics.
    Tensor scale = rsqrt(running_var + eps);
    if (weight.defined()) {
        scale = scale * weight;
    }
    Tensor shift = -(running_mean * scale);
    if (bias.defined()) {
        shift = shift + bias;
    }
    return scaled_by_channel(input, scale, shift);
}

Tensor group_norm(const Tensor& input, std::int64_t groups, const Tensor& weight,
                  const Tensor& bias, double eps) {
    if (input.dim() < 2 || groups < 1 || input.size(1) % groups != 0) {
        throw ValueError("group_norm: expected [N, C, *] with C divisible by num_groups=" +
                         std::to_string(groups) + ", got " + to_string(input.shape()));
    }
    const bool has_weight = weight.defined();
    const bool has_bias = bias.defined();
    const auto composed = [groups, has_weight, has_bias, eps](const std::vector<Tensor>& in) {
        // Each group normalised as a layer over its elements: the fused layer_norm kernel.
        const Tensor grouped = in[0].reshape({in[0].size(0), groups, -1});
        Tensor result =
            layer_norm(grouped, {grouped.size(2)}, Tensor(), Tensor(), eps).reshape(in[0].shape());
        Shape view(static_cast<std::size_t>(in[0].dim()), 1);
        view[1] = in[0].size(1);
        result = has_weight ? result * in[1].reshape(view) : result;
        return has_bias ? result + in[has_weight ? 2 : 1].reshape(view) : result;
    };
    if (Tensor fused = detail::plugin_group_norm(input, groups, weight, bias, eps, composed);
        fused.defined()) {
        return fused;
    }
    const Tensor grouped = input.reshape({input.size(0), groups, -1});
    const Tensor result =
        layer_norm(grouped, {grouped.size(2)}, Tensor(), Tensor(), eps).reshape(input.shape());
    return scaled_by_channel(result, weight, bias);
}

}  // namespace kael::nn::functional

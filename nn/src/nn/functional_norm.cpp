// Batch and group normalisation (nn_conv.h) on the fused layer_norm kernel: a channel's values
// over the batch (or a sample's group of channels) are one row it normalises.
#include <utility>

#include "kael/autograd.h"
#include "kael/nn_conv.h"
#include "kael/nn_functional.h"

namespace kael::nn::functional {

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
    Tensor result;
    if (training || !running_mean.defined()) {
        const std::int64_t per_channel = channels == 0 ? 0 : input.numel() / channels;
        if (training && per_channel <= 1) {
            throw ValueError(
                "batch_norm: expected more than 1 value per channel when training, "
                "got input " +
                to_string(input.shape()));
        }
        // Each channel's values as one row [C, N * positions], normalised by the fused
        // layer_norm kernel (forward and backward), then laid back as [N, C, *].
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
        if (training && running_mean.defined()) {
            const NoGradGuard no_grad;
            const Tensor values = rows.detach();
            Tensor moving_mean = running_mean;
            Tensor moving_var = running_var;
            moving_mean.copy_(moving_mean * (1.0 - momentum) + mean(values, 1) * momentum);
            moving_var.copy_(moving_var * (1.0 - momentum) + var(values, Shape{1}, 1) * momentum);
        }
        return normal.reshape(rows_shape).transpose(0, 1).contiguous();
    } else {
        result = (input - running_mean.reshape(view)) * rsqrt(running_var + eps).reshape(view);
    }
    if (weight.defined()) {
        result = result * weight.reshape(view);
    }
    if (bias.defined()) {
        result = result + bias.reshape(view);
    }
    return result;
}

Tensor group_norm(const Tensor& input, std::int64_t groups, const Tensor& weight,
                  const Tensor& bias, double eps) {
    if (input.dim() < 2 || groups < 1 || input.size(1) % groups != 0) {
        throw ValueError("group_norm: expected [N, C, *] with C divisible by num_groups=" +
                         std::to_string(groups) + ", got " + to_string(input.shape()));
    }
    // Each group normalised as a layer over its elements: the fused layer_norm kernel.
    const Tensor grouped = input.reshape({input.size(0), groups, -1});
    Tensor result =
        layer_norm(grouped, {grouped.size(2)}, Tensor(), Tensor(), eps).reshape(input.shape());
    Shape view(static_cast<std::size_t>(input.dim()), 1);
    view[1] = input.size(1);
    if (weight.defined()) {
        result = result * weight.reshape(view);
    }
    if (bias.defined()) {
        result = result + bias.reshape(view);
    }
    return result;
}

}  // namespace kael::nn::functional

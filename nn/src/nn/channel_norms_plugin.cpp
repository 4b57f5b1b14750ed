// The norms' per-channel steps on the device plugin's per-channel kernels
// (KAEL_EXTENSION_CHANNELS). BatchNorm's training step: forward one moments pass and one affine
// pass, backward one pass of sums and one affine pass, where the composed form transposes the
// input to rows and back each way. GroupNorm likewise, a group one channel of the moments. A
// per-channel scale and shift (evaluation BatchNorm, a weight and bias): one pass forward, two
// backward, where a composed multiply and add take two and four. Double backward
// differentiates the composed forms.
#include <initializer_list>
#include <optional>
#include <vector>

#include "channel_calls.h"
#include "kael/autograd.h"
#include "kael/ops.h"
#include "nn_internal.h"

namespace kael::nn::detail {

namespace {

using kael::detail::ChannelSizes;

// A norm's composed form as the list of its one output (what differentiable_gradients takes).
ComposedCell listed(const ComposedNorm& composed) {
    return [composed](const std::vector<Tensor>& in) { return std::vector<Tensor>{composed(in)}; };
}

// Whether the kernels take input [N, C, *] (a float dtype, not empty) with these per-channel
// operands, each undefined or [C] of a float dtype on input's device.
bool one_call(const Tensor& input, std::initializer_list<Tensor> per_channel) {
    if (!is_floating(input.dtype()) || input.dim() < 2 || input.numel() == 0) {
        return false;
    }
    for (const Tensor& t : per_channel) {
        if (t.defined() && (t.device() != input.device() || !is_floating(t.dtype()) ||
                            t.dim() != 1 || t.size(0) != input.size(1))) {
            return false;
        }
    }
    return kael::detail::has_channel_kernels(input);
}

// x ([N, C, *], contiguous) as the kernels' [N, C, positions].
ChannelSizes channel_sizes(const Tensor& x) {
    return {x.size(0), x.size(1), x.numel() / (x.size(0) * x.size(1))};
}

// Grad mode on for a scope (the declined backward records the composed form to differentiate it).
struct GradEnabled {
    bool previous = is_grad_enabled();
    GradEnabled() { set_grad_enabled(true); }
    ~GradEnabled() { set_grad_enabled(previous); }
    GradEnabled(const GradEnabled&) = delete;
    GradEnabled& operator=(const GradEnabled&) = delete;
};

// The inputs a node records: input, then the per-channel operands that are defined.
std::vector<Tensor> recorded_inputs(const Tensor& input, const Tensor& first,
                                    const Tensor& second) {
    std::vector<Tensor> inputs{input};
    for (const Tensor& t : {first, second}) {
        if (t.defined()) {
            inputs.push_back(t);
        }
    }
    return inputs;
}

}  // namespace

Tensor plugin_batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                         const Tensor& weight, const Tensor& bias, double momentum, double eps,
                         const ComposedNorm& composed) {
    if (!one_call(input, {weight, bias, running_mean, running_var})) {
        return {};
    }
    const Tensor x = input.contiguous();
    const ChannelSizes sizes = channel_sizes(x);
    const auto count = static_cast<double>(sizes.outer * sizes.inner);
    const DType stat = kael::detail::channel_stat_dtype(x.dtype());
    Tensor mean;
    Tensor invstd;
    Tensor scale;
    Tensor y;
    {
        const NoGradGuard no_grad;
        const auto moments = kael::detail::channel_moments(x, sizes, 0.0);
        if (!moments) {
            return {};
        }
        mean = moments->first;
        invstd = rsqrt(moments->second + eps);
        scale = weight.defined() ? invstd * weight.to(stat) : invstd;
        const Tensor shift = bias.defined() ? bias.to(stat) - mean * scale : -(mean * scale);
        const std::optional<Tensor> out =
            kael::detail::channel_affine(x, scale, shift, Tensor(), Tensor(), sizes);
        if (!out) {
            return {};
        }
        y = *out;
        if (running_mean.defined() && running_var.defined()) {
            // PyTorch's running variance is the unbiased one.
            const Tensor unbiased = moments->second * (count / (count - 1.0));
            Tensor moving_mean = running_mean;
            Tensor moving_var = running_var;
            moving_mean.copy_(moving_mean * (1.0 - momentum) +
                              (mean * momentum).to(moving_mean.dtype()));
            moving_var.copy_(moving_var * (1.0 - momentum) +
                             (unbiased * momentum).to(moving_var.dtype()));
        }
    }
    const std::vector<Tensor> inputs = recorded_inputs(input, weight, bias);
    autograd::record_function(
        {y}, inputs, "NativeBatchNormBackward", [=](const std::vector<Tensor>& grads) {
            const std::size_t slots = inputs.size();
            if (!grads[0].defined()) {
                return std::vector<Tensor>(slots);
            }
            if (is_grad_enabled()) {  // create_graph: the composed form differentiates again
                return differentiable_gradients(listed(composed), grads, inputs);
            }
            const Tensor g = grads[0].contiguous();
            const auto sums = kael::detail::channel_backward_sums(x, g, mean, sizes);
            std::optional<Tensor> dx;
            if (sums && input.requires_grad()) {
                // dx = scale * (g - sum_grad / n - xhat * sum(g * xhat) / n), xhat = (x - mean) *
                // invstd: g * scale + x * b + d per channel.
                const auto& [sum_grad, sum_centered] = *sums;
                const Tensor b = -(scale * invstd * invstd * sum_centered) / count;
                const Tensor d = -(scale * sum_grad) / count - b * mean;
                dx = kael::detail::channel_affine(g, scale, d, x, b, sizes);
            }
            if (!sums || (input.requires_grad() && !dx)) {  // declined: the composed gradients
                const GradEnabled enabled;
                return differentiable_gradients(listed(composed), grads, inputs);
            }
            const auto& [sum_grad, sum_centered] = *sums;
            std::vector<Tensor> result(slots);
            result[0] = dx ? *dx : Tensor();
            std::size_t next = 1;
            if (weight.defined()) {
                if (weight.requires_grad()) {
                    result[next] = (sum_centered * invstd).to(weight.dtype());
                }
                ++next;
            }
            if (bias.defined() && bias.requires_grad()) {
                result[next] = sum_grad.to(bias.dtype());
            }
            return result;
        });
    return y;
}

Tensor plugin_group_norm(const Tensor& input, std::int64_t groups, const Tensor& weight,
                         const Tensor& bias, double eps, const ComposedNorm& composed) {
    if (!one_call(input, {weight, bias})) {
        return {};
    }
    const Tensor x = input.contiguous();
    const std::int64_t n = x.size(0);
    const std::int64_t c = x.size(1);
    const std::int64_t per_group = c / groups;
    const std::int64_t positions = x.numel() / (n * c);
    // A group is one channel of [1, N * G, C / G * S]; the maps run per (n, c) of [1, N * C, S].
    const ChannelSizes by_group{1, n * groups, per_group * positions};
    const ChannelSizes by_channel{1, n * c, positions};
    const auto count = static_cast<double>(by_group.inner);
    const DType stat = kael::detail::channel_stat_dtype(x.dtype());
    const Device device = x.device();
    const auto per_channel = [n, groups, per_group,
                              c](const Tensor& of_group) {  // [N, G] -> [N, C]
        return of_group.reshape({n, groups, 1}).expand({n, groups, per_group}).reshape({n, c});
    };
    Tensor mean;  // [N, C]
    Tensor invstd;
    Tensor w;  // [1, C] in the stat dtype (ones without a weight)
    Tensor scale;
    Tensor y;
    {
        const NoGradGuard no_grad;
        const auto moments = kael::detail::channel_moments(x, by_group, 0.0);
        if (!moments) {
            return {};
        }
        mean = per_channel(moments->first);
        invstd = per_channel(rsqrt(moments->second + eps));
        w = weight.defined() ? weight.detach().to(stat).reshape({1, c})
                             : ones({1, c}, stat, device);
        scale = invstd * w;
        Tensor shift = -(mean * scale);
        if (bias.defined()) {
            shift = shift + bias.detach().to(stat).reshape({1, c});
        }
        const std::optional<Tensor> out = kael::detail::channel_affine(
            x, scale.reshape({-1}), shift.reshape({-1}), Tensor(), Tensor(), by_channel);
        if (!out) {
            return {};
        }
        y = *out;
    }
    const std::vector<Tensor> inputs = recorded_inputs(input, weight, bias);
    autograd::record_function(
        {y}, inputs, "NativeGroupNormBackward", [=](const std::vector<Tensor>& grads) {
            if (!grads[0].defined()) {
                return std::vector<Tensor>(inputs.size());
            }
            if (is_grad_enabled()) {  // create_graph: the composed form differentiates again
                return differentiable_gradients(listed(composed), grads, inputs);
            }
            const Tensor g = grads[0].contiguous();
            const auto sums =
                kael::detail::channel_backward_sums(x, g, mean.reshape({-1}), by_channel);
            std::optional<Tensor> dx;
            if (sums && input.requires_grad()) {
                // dx = r * (dy * w - A - xhat * B) per group, A the group's mean of dy * w and B of
                // dy * w * xhat: dy * (r * w) + x * (-r^2 B) + (r^2 B mean - r A) per (n, c).
                const auto in_group = [&](const Tensor& t) {  // [N, C] summed per group, as [N, C]
                    return per_channel(sum(t.reshape({n, groups, per_group}), 2));
                };
                const Tensor a = in_group(w * sums->first.reshape({n, c})) / count;
                const Tensor b = invstd * in_group(w * sums->second.reshape({n, c})) / count;
                const Tensor x_scale = -(invstd * invstd * b);
                const Tensor offset = invstd * invstd * b * mean - invstd * a;
                dx = kael::detail::channel_affine(g, scale.reshape({-1}), offset.reshape({-1}), x,
                                                  x_scale.reshape({-1}), by_channel);
            }
            if (!sums || (input.requires_grad() && !dx)) {  // declined: the composed gradients
                const GradEnabled enabled;
                return differentiable_gradients(listed(composed), grads, inputs);
            }
            std::vector<Tensor> result(inputs.size());
            result[0] = dx ? *dx : Tensor();
            std::size_t next = 1;
            if (weight.defined()) {
                if (weight.requires_grad()) {
                    result[next] = sum(sums->second.reshape({n, c}) * invstd, 0).to(weight.dtype());
                }
                ++next;
            }
            if (bias.defined() && bias.requires_grad()) {
                result[next] = sum(sums->first.reshape({n, c}), 0).to(bias.dtype());
            }
            return result;
        });
    return y;
}

Tensor plugin_channel_affine(const Tensor& input, const Tensor& scale, const Tensor& shift) {
    if ((!scale.defined() && !shift.defined()) || !one_call(input, {scale, shift})) {
        return {};
    }
    const Tensor x = input.contiguous();
    const ChannelSizes sizes = channel_sizes(x);
    const DType stat = kael::detail::channel_stat_dtype(x.dtype());
    const Device device = x.device();
    Tensor a;
    Tensor y;
    {
        const NoGradGuard no_grad;
        a = scale.defined() ? scale.detach().to(stat) : ones({sizes.channels}, stat, device);
        const Tensor b =
            shift.defined() ? shift.detach().to(stat) : zeros({sizes.channels}, stat, device);
        const std::optional<Tensor> out =
            kael::detail::channel_affine(x, a, b, Tensor(), Tensor(), sizes);
        if (!out) {
            return {};
        }
        y = *out;
    }
    const std::vector<Tensor> inputs = recorded_inputs(input, scale, shift);
    const bool has_scale = scale.defined();
    const bool has_shift = shift.defined();
    const auto composed = [has_scale, has_shift](const std::vector<Tensor>& in) {
        Shape view(static_cast<std::size_t>(in[0].dim()), 1);
        view[1] = in[0].size(1);
        Tensor result = has_scale ? in[0] * in[1].reshape(view) : in[0];
        return has_shift ? result + in[has_scale ? 2 : 1].reshape(view) : result;
    };
    autograd::record_function(
        {y}, inputs, "ChannelAffineBackward", [=](const std::vector<Tensor>& grads) {
            if (!grads[0].defined()) {
                return std::vector<Tensor>(inputs.size());
            }
            if (is_grad_enabled()) {
                return differentiable_gradients(listed(composed), grads, inputs);
            }
            const Tensor g = grads[0].contiguous();
            const bool scale_grad = has_scale && scale.requires_grad();
            const bool shift_grad = has_shift && shift.requires_grad();
            std::optional<std::pair<Tensor, Tensor>> sums;
            if (scale_grad || shift_grad) {
                const Tensor origin = zeros({sizes.channels}, stat, device);
                sums = kael::detail::channel_backward_sums(x, g, origin, sizes);
            }
            std::optional<Tensor> dx;
            if (input.requires_grad()) {
                dx = has_scale
                         ? kael::detail::channel_affine(g, a, zeros({sizes.channels}, stat, device),
                                                        Tensor(), Tensor(), sizes)
                         : std::optional<Tensor>(g);
            }
            if ((input.requires_grad() && !dx) || ((scale_grad || shift_grad) && !sums)) {
                const GradEnabled enabled;
                return differentiable_gradients(listed(composed), grads, inputs);
            }
            std::vector<Tensor> result(inputs.size());
            result[0] = dx ? *dx : Tensor();
            if (scale_grad) {
                result[1] = sums->second.to(scale.dtype());
            }
            if (shift_grad) {
                result[has_scale ? 2 : 1] = sums->first.to(shift.dtype());
            }
            return result;
        });
    return y;
}

}  // namespace kael::nn::detail

#include "channel_calls.h"

#include "backend.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael::detail {

namespace {

const kael_channels* channels_of(const Device& device) {
    return static_cast<const kael_channels*>(
        backend_for(device).extension(KAEL_EXTENSION_CHANNELS, sizeof(kael_channels)));
}

// The per-channel operand as the kernels read it: contiguous, in the stat dtype, on the device.
Tensor stat_operand(const Tensor& t, DType dtype) {
    return t.to(dtype).contiguous();
}

}  // namespace

DType channel_stat_dtype(DType dtype) {
    return dtype == DType::F64 ? DType::F64 : DType::F32;
}

bool has_channel_kernels(const Tensor& data) {
    return channels_of(data.device()) != nullptr;
}

std::optional<std::pair<Tensor, Tensor>> channel_moments(const Tensor& data, ChannelSizes sizes,
                                                         double correction) {
    const kael_channels* plugin = channels_of(data.device());
    if (plugin == nullptr || plugin->moments == nullptr) {
        return std::nullopt;
    }
    const DType stat = channel_stat_dtype(data.dtype());
    Tensor mean = empty({sizes.channels}, stat, data.device());
    Tensor variance = empty({sizes.channels}, stat, data.device());
    const kael_status status = plugin->moments(
        data.device().index, abi(data.dtype()), sizes.outer, sizes.channels, sizes.inner,
        data.device_data(), correction, mean.device_data(), variance.device_data());
    if (!backend_for(data.device()).served(status, "moments")) {
        return std::nullopt;
    }
    return std::pair{mean, variance};
}

std::optional<std::pair<Tensor, Tensor>> channel_backward_sums(const Tensor& data,
                                                               const Tensor& grad,
                                                               const Tensor& mean,
                                                               ChannelSizes sizes) {
    const kael_channels* plugin = channels_of(data.device());
    if (plugin == nullptr || plugin->backward_sums == nullptr) {
        return std::nullopt;
    }
    const DType stat = channel_stat_dtype(data.dtype());
    const Tensor center = stat_operand(mean, stat);
    Tensor sum_grad = empty({sizes.channels}, stat, data.device());
    Tensor sum_centered = empty({sizes.channels}, stat, data.device());
    const kael_status status = plugin->backward_sums(
        data.device().index, abi(data.dtype()), sizes.outer, sizes.channels, sizes.inner,
        data.device_data(), grad.device_data(), center.device_data(), sum_grad.device_data(),
        sum_centered.device_data());
    if (!backend_for(data.device()).served(status, "backward_sums")) {
        return std::nullopt;
    }
    return std::pair{sum_grad, sum_centered};
}

std::optional<Tensor> channel_affine(const Tensor& data, const Tensor& scale, const Tensor& shift,
                                     const Tensor& other, const Tensor& other_scale,
                                     ChannelSizes sizes) {
    const kael_channels* plugin = channels_of(data.device());
    if (plugin == nullptr || plugin->affine == nullptr) {
        return std::nullopt;
    }
    const DType stat = channel_stat_dtype(data.dtype());
    const Tensor a = stat_operand(scale, stat);
    const Tensor b = stat_operand(shift, stat);
    const Tensor o = other.defined() ? stat_operand(other_scale, stat) : Tensor();
    Tensor out = empty(data.shape(), data.dtype(), data.device());
    const kael_status status =
        plugin->affine(data.device().index, abi(data.dtype()), sizes.outer, sizes.channels,
                       sizes.inner, data.device_data(), a.device_data(), b.device_data(),
                       other.defined() ? other.device_data() : nullptr,
                       o.defined() ? o.device_data() : nullptr, out.device_data());
    if (!backend_for(data.device()).served(status, "affine")) {
        return std::nullopt;
    }
    return out;
}

}  // namespace kael::detail

#pragma once
// Calls of the device plugin's per-channel kernels (KAEL_EXTENSION_CHANNELS) over a dense block
// [outer, channels, inner], for var/std around one kept run and kael.nn's BatchNorm. Each
// returns nullopt where the plugin has no such kernel or declines the call, and the caller then
// composes the same result from its own ops on the device.
#include <cstdint>
#include <optional>
#include <utility>

#include "kael/tensor.h"

namespace kael::detail {

struct ChannelSizes {
    std::int64_t outer;
    std::int64_t channels;
    std::int64_t inner;
};

// float64 for float64 data, float32 for the other float dtypes: the per-channel tensors' dtype.
[[nodiscard]] DType channel_stat_dtype(DType dtype);

// Whether data's plugin has the channel kernels (a float dtype assumed).
[[nodiscard]] bool has_channel_kernels(const Tensor& data);

// {mean, variance} per channel ([channels], channel_stat_dtype), variance M2 / max(count -
// correction, 0). data's memory from its first element is the dense block.
[[nodiscard]] std::optional<std::pair<Tensor, Tensor>> channel_moments(const Tensor& data,
                                                                       ChannelSizes sizes,
                                                                       double correction);

// {sum of grad, sum of grad * (data - mean)} per channel; data and grad dense blocks alike.
[[nodiscard]] std::optional<std::pair<Tensor, Tensor>> channel_backward_sums(const Tensor& data,
                                                                             const Tensor& grad,
                                                                             const Tensor& mean,
                                                                             ChannelSizes sizes);

// data * scale[c] + shift[c] (+ other * other_scale[c] where other is defined), a new tensor
// shaped as data (contiguous data and other).
[[nodiscard]] std::optional<Tensor> channel_affine(const Tensor& data, const Tensor& scale,
                                                   const Tensor& shift, const Tensor& other,
                                                   const Tensor& other_scale, ChannelSizes sizes);

}  // namespace kael::detail

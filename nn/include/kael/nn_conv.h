#pragma once
// torch.nn's convolution, pooling and batch/group normalisation over [N, C, *spatial] inputs
// (1 to 3 spatial dims; an unbatched [C, *spatial] input is taken as a batch of one), composed
// from the core's ops so they run and differentiate on every device: sliding windows (im2col,
// F.unfold's layout) copied once from a strided view, then one matrix product. Sizes given as
// one number apply to every spatial dim.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "kael/nn.h"
#include "kael/ops.h"

namespace kael::nn::functional {

// What device's plugin convolves with (its KAEL_EXTENSION_CONVOLUTION's library: oneDNN on the
// cpu plugin, cuDNN on the cuda one, loaded by this question), or "" where the core composes
// every convolution from its ops.
[[nodiscard]] std::string convolution_library(const Device& device);

// input [N, C, *S] -> [N, *O, C, *K], O_i = (S_i - dilation_i * (K_i - 1) - 1) / stride_i + 1:
// every window of the kernel, one row per output position. Differentiable (its backward adds
// each window back in place).
[[nodiscard]] Tensor sliding_windows(const Tensor& input, const Shape& kernel, const Shape& stride,
                                     const Shape& dilation);

// sliding_windows' adjoint: windows [N, *O, C, *K] summed into a zero [N, C, *S] (shape)
// where each was read from; differentiable (F.fold's and conv_transpose's last step).
[[nodiscard]] Tensor fold_windows(const Tensor& windows, const Shape& shape, const Shape& kernel,
                                  const Shape& stride, const Shape& dilation);

// padding: (before, after) pairs from the last dim backwards, as pad(); mode "constant"
// (value), "reflect", "replicate" or "circular". Differentiable.
[[nodiscard]] Tensor pad(const Tensor& input, const Shape& pad, const std::string& mode,
                         double value = 0.0);

// torch.nn.functional.conv1d/2d/3d by weight's rank: weight [OC, C / groups, *K], bias [OC]
// (undefined: none). Zero padding of `padding` on both sides of each spatial dim.
[[nodiscard]] Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias,
                          const Shape& stride, const Shape& padding, const Shape& dilation,
                          std::int64_t groups = 1);
// padding "valid" (none) or "same" (output as large as the input; stride 1 only, an odd total
// split with the extra on the right, as PyTorch).
[[nodiscard]] Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias,
                          const Shape& stride, const std::string& padding, const Shape& dilation,
                          std::int64_t groups = 1);

// torch.nn.functional.conv_transpose1d/2d/3d by weight's rank: weight [C, OC / groups,
// *kernel], bias [OC] (undefined: none); output_padding (below stride or dilation) adds to one
// side of each output dim.
[[nodiscard]] Tensor conv_transpose(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                    const Shape& stride, const Shape& padding,
                                    const Shape& output_padding, std::int64_t groups,
                                    const Shape& dilation);

struct PoolOptions {
    Shape kernel;
    Shape stride;  // empty: the kernel
    Shape padding{0};
    Shape dilation{1};  // max pooling only
    bool ceil_mode = false;
    bool count_include_pad = true;                 // average pooling only
    std::optional<std::int64_t> divisor_override;  // average pooling only
};
// Max over each window of `spatial` trailing dims (padding counts as -inf); indices are flat
// positions within each input plane, as PyTorch's return_indices. The gradient goes to the
// first maximum of each window.
[[nodiscard]] std::pair<Tensor, Tensor> max_pool_with_indices(const Tensor& input,
                                                              std::int64_t spatial,
                                                              const PoolOptions& options);
[[nodiscard]] Tensor max_pool(const Tensor& input, std::int64_t spatial,
                              const PoolOptions& options);
[[nodiscard]] Tensor avg_pool(const Tensor& input, std::int64_t spatial,
                              const PoolOptions& options);
// Output size per spatial dim; bin i of size S over O covers [floor(i S / O), ceil((i+1) S / O)).
[[nodiscard]] Tensor adaptive_avg_pool(const Tensor& input, const Shape& output_size);
[[nodiscard]] std::pair<Tensor, Tensor> adaptive_max_pool_with_indices(const Tensor& input,
                                                                       const Shape& output_size);

// Over dim 1 of [N, C, *]: batch statistics when training or without running statistics (the
// running ones then move by momentum, the variance unbiased), the running ones otherwise.
[[nodiscard]] Tensor batch_norm(const Tensor& input, const Tensor& running_mean,
                                const Tensor& running_var, const Tensor& weight, const Tensor& bias,
                                bool training, double momentum = 0.1, double eps = 1e-5);
// Statistics over each group of channels (and every spatial position) of each sample.
[[nodiscard]] Tensor group_norm(const Tensor& input, std::int64_t groups,
                                const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                                double eps = 1e-5);

}  // namespace kael::nn::functional

namespace kael::nn {

// Conv1d, Conv2d and Conv3d (spatial 1-3): weight [out, in / groups, *kernel] and bias [out]
// uniform in +-1/sqrt(fan_in) as PyTorch's default; padding_mode "zeros", "reflect",
// "replicate" or "circular"; padding "same"/"valid" through padding_name. transposed:
// ConvTranspose1d-3d, weight [in, out / groups, *kernel], zero padding and output_padding.
struct ConvOptions {
    std::int64_t in_channels = 0;
    std::int64_t out_channels = 0;
    Shape kernel_size;
    Shape stride{1};
    Shape padding{0};
    std::string padding_name;  // "same" or "valid" instead of padding; empty: padding
    Shape dilation{1};
    std::int64_t groups = 1;
    bool bias = true;
    std::string padding_mode = "zeros";
    bool transposed = false;
    Shape output_padding{0};  // transposed only
};

class Conv : public Module {
public:
    Conv(std::int64_t spatial, const ConvOptions& options, Device device = kCPU);
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override;
    [[nodiscard]] std::string extra_repr() const override;
    std::int64_t spatial;
    ConvOptions options;  // sizes expanded to one per spatial dim
    Tensor weight;
    Tensor bias;
};

// MaxPool1d/2d/3d and AvgPool1d/2d/3d.
class Pool : public Module {
public:
    Pool(std::int64_t spatial, bool max, const functional::PoolOptions& options);
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override;
    [[nodiscard]] std::string extra_repr() const override;
    std::int64_t spatial;
    bool max;
    functional::PoolOptions options;
};

// AdaptiveAvgPool1d/2d/3d and AdaptiveMaxPool1d/2d/3d.
class AdaptivePool : public Module {
public:
    AdaptivePool(bool max, const Shape& output_size);
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override;
    [[nodiscard]] std::string extra_repr() const override;
    bool max;
    Shape output_size;
};

// BatchNorm1d/2d/3d: weight ones, bias zeros (affine), buffers running_mean, running_var and
// num_batches_tracked (track_running_stats); momentum nullopt is the cumulative average.
class BatchNorm : public Module {
public:
    BatchNorm(std::int64_t spatial, std::int64_t num_features, double eps = 1e-5,
              std::optional<double> momentum = 0.1, bool affine = true,
              bool track_running_stats = true, Device device = kCPU);
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override;
    [[nodiscard]] std::string extra_repr() const override;
    std::int64_t spatial;
    std::int64_t num_features;
    double eps;
    std::optional<double> momentum;
    Tensor weight;
    Tensor bias;
    // The buffers (undefined without track_running_stats).
    [[nodiscard]] Tensor running_mean() const { return slot(running_mean_); }
    [[nodiscard]] Tensor running_var() const { return slot(running_var_); }
    [[nodiscard]] Tensor num_batches_tracked() const { return slot(num_batches_tracked_); }

private:
    static Tensor slot(const Tensor* buffer) { return buffer ? *buffer : Tensor(); }
    Tensor* running_mean_ = nullptr;  // in the module's buffers
    Tensor* running_var_ = nullptr;
    Tensor* num_batches_tracked_ = nullptr;
};

class GroupNorm : public Module {
public:
    GroupNorm(std::int64_t num_groups, std::int64_t num_channels, double eps = 1e-5,
              bool affine = true, Device device = kCPU);
    Tensor forward(const Tensor& input) override;
    [[nodiscard]] std::string type_name() const override { return "GroupNorm"; }
    [[nodiscard]] std::string extra_repr() const override;
    std::int64_t num_groups;
    double eps;
    Tensor weight;
    Tensor bias;
};

}  // namespace kael::nn

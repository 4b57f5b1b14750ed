// Conv1d-3d, pooling and batch/group normalisation modules (nn_conv.h) over the composed
// functional forms, with PyTorch's defaults, initialisation and state_dict keys.
#include <algorithm>
#include <cmath>
#include <string>

#include "kael/autograd.h"
#include "kael/nn_conv.h"
#include "kael/ops.h"
#include "nn_internal.h"

namespace kael::nn {

namespace {

namespace F = functional;

std::string sizes(const Shape& shape) {
    std::string text = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        text += (i ? ", " : "") + std::to_string(shape[i]);
    }
    return text + (shape.size() == 1 ? ",)" : ")");
}

bool all_are(const Shape& shape, std::int64_t value) {
    return std::all_of(shape.begin(), shape.end(), [&](std::int64_t s) { return s == value; });
}

const char* dims_suffix(std::int64_t spatial) {
    return spatial == 1 ? "1d" : spatial == 2 ? "2d" : "3d";
}

}  // namespace

Conv::Conv(std::int64_t dims, const ConvOptions& given, Device device)
    : spatial(dims), options(given) {
    const std::string who =
        std::string(options.transposed ? "ConvTranspose" : "Conv") + dims_suffix(dims);
    if (dims < 1 || dims > 3) {
        throw ValueError("Conv: 1 to 3 spatial dims, got " + std::to_string(dims));
    }
    detail::require_positive(options.in_channels, who.c_str(), "in_channels");
    detail::require_positive(options.out_channels, who.c_str(), "out_channels");
    detail::require_positive(options.groups, who.c_str(), "groups");
    if (options.in_channels % options.groups != 0 || options.out_channels % options.groups != 0) {
        throw ValueError(who + ": in_channels and out_channels must be divisible by groups");
    }
    if (options.padding_mode != "zeros" && options.padding_mode != "reflect" &&
        options.padding_mode != "replicate" && options.padding_mode != "circular") {
        throw ValueError(who +
                         ": padding_mode must be 'zeros', 'reflect', 'replicate' or "
                         "'circular', got '" +
                         options.padding_mode + "'");
    }
    if (!options.padding_name.empty() && options.padding_name != "same" &&
        options.padding_name != "valid") {
        throw ValueError(who + ": padding must be 'same', 'valid' or sizes, got '" +
                         options.padding_name + "'");
    }
    options.kernel_size =
        detail::per_spatial_dim(options.kernel_size, dims, who.c_str(), "kernel_size");
    options.stride = detail::per_spatial_dim(options.stride, dims, who.c_str(), "stride");
    options.padding = detail::per_spatial_dim(options.padding, dims, who.c_str(), "padding");
    options.dilation = detail::per_spatial_dim(options.dilation, dims, who.c_str(), "dilation");
    options.output_padding =
        detail::per_spatial_dim(options.output_padding, dims, who.c_str(), "output_padding");
    if (options.transposed && (options.padding_mode != "zeros" || !options.padding_name.empty())) {
        throw ValueError(who + ": only zero padding given as sizes (PyTorch's rule)");
    }
    // PyTorch's fan_in is the weight's dim 1 times the kernel: in / groups, or for a transposed
    // convolution (weight [in, out / groups, *kernel]) out / groups.
    Shape shape{options.out_channels, options.in_channels / options.groups};
    if (options.transposed) {
        shape = {options.in_channels, options.out_channels / options.groups};
    }
    std::int64_t fan_in = shape[1];
    for (const std::int64_t k : options.kernel_size) {
        detail::require_positive(k, who.c_str(), "kernel_size");
        shape.push_back(k);
        fan_in *= k;
    }
    // kaiming_uniform_(a=sqrt(5)) as PyTorch's reset_parameters: bound 1/sqrt(fan_in) for both.
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    const NoGradGuard no_grad;
    register_parameter("weight", weight, ((rand(shape) * 2.0 - 1.0) * bound).to(device));
    if (options.bias) {
        register_parameter("bias", bias,
                           ((rand({options.out_channels}) * 2.0 - 1.0) * bound).to(device));
    }
}

Tensor Conv::forward(const Tensor& input) {
    if (options.transposed) {
        return F::conv_transpose(input, weight, bias, options.stride, options.padding,
                                 options.output_padding, options.groups, options.dilation);
    }
    if (!options.padding_name.empty()) {
        return F::conv(input, weight, bias, options.stride, options.padding_name, options.dilation,
                       options.groups);
    }
    if (options.padding_mode == "zeros") {
        return F::conv(input, weight, bias, options.stride, options.padding, options.dilation,
                       options.groups);
    }
    Shape pairs;  // PyTorch's _reversed_padding_repeated_twice
    for (std::size_t i = options.padding.size(); i-- > 0;) {
        pairs.insert(pairs.end(), {options.padding[i], options.padding[i]});
    }
    return F::conv(F::pad(input, pairs, options.padding_mode), weight, bias, options.stride,
                   Shape{0}, options.dilation, options.groups);
}

std::string Conv::type_name() const {
    return std::string(options.transposed ? "ConvTranspose" : "Conv") + dims_suffix(spatial);
}

std::string Conv::extra_repr() const {
    std::string text =
        std::to_string(options.in_channels) + ", " + std::to_string(options.out_channels) +
        ", kernel_size=" + sizes(options.kernel_size) + ", stride=" + sizes(options.stride);
    if (!options.padding_name.empty()) {
        text += ", padding=" + options.padding_name;
    } else if (!all_are(options.padding, 0)) {
        text += ", padding=" + sizes(options.padding);
    }
    if (!all_are(options.dilation, 1)) {
        text += ", dilation=" + sizes(options.dilation);
    }
    if (!all_are(options.output_padding, 0)) {
        text += ", output_padding=" + sizes(options.output_padding);
    }
    if (options.groups != 1) {
        text += ", groups=" + std::to_string(options.groups);
    }
    if (!options.bias) {
        text += ", bias=False";
    }
    if (options.padding_mode != "zeros") {
        text += ", padding_mode=" + options.padding_mode;
    }
    return text;
}

Pool::Pool(std::int64_t dims, bool is_max, const F::PoolOptions& given)
    : spatial(dims), max(is_max), options(given) {
    if (dims < 1 || dims > 3 || options.kernel.empty()) {
        throw ValueError(type_name() + ": needs a kernel_size and 1-3 spatial dims");
    }
}

Tensor Pool::forward(const Tensor& input) {
    return max ? F::max_pool(input, spatial, options) : F::avg_pool(input, spatial, options);
}

std::string Pool::type_name() const {
    return std::string(max ? "MaxPool" : "AvgPool") + dims_suffix(spatial);
}

std::string Pool::extra_repr() const {
    const auto number = [](const Shape& s) {
        return s.size() == 1 ? std::to_string(s[0]) : sizes(s);
    };
    const Shape& stride = options.stride.empty() ? options.kernel : options.stride;
    std::string text = "kernel_size=" + number(options.kernel) + ", stride=" + number(stride) +
                       ", padding=" + number(options.padding);
    if (!max) {  // PyTorch's AvgPool printout stops here
        return text;
    }
    return text + ", dilation=" + number(options.dilation) +
           ", ceil_mode=" + (options.ceil_mode ? "True" : "False");
}

AdaptivePool::AdaptivePool(bool is_max, const Shape& size) : max(is_max), output_size(size) {
    if (size.empty() || size.size() > 3) {
        throw ValueError("AdaptivePool: output_size needs 1-3 sizes");
    }
}

Tensor AdaptivePool::forward(const Tensor& input) {
    return max ? F::adaptive_max_pool_with_indices(input, output_size).first
               : F::adaptive_avg_pool(input, output_size);
}

std::string AdaptivePool::type_name() const {
    return std::string(max ? "AdaptiveMaxPool" : "AdaptiveAvgPool") +
           dims_suffix(static_cast<std::int64_t>(output_size.size()));
}

std::string AdaptivePool::extra_repr() const {
    return "output_size=" +
           (output_size.size() == 1 ? std::to_string(output_size[0]) : sizes(output_size));
}

BatchNorm::BatchNorm(std::int64_t dims, std::int64_t features, double epsilon,
                     std::optional<double> moving, bool affine, bool track_running_stats,
                     Device device)
    : spatial(dims), num_features(features), eps(epsilon), momentum(moving) {
    detail::require_positive(features, "BatchNorm", "num_features");
    if (affine) {
        register_parameter("weight", weight, ones({features}, DType::F32, device));
        register_parameter("bias", bias, zeros({features}, DType::F32, device));
    }
    if (track_running_stats) {
        running_mean_ = &register_buffer("running_mean", zeros({features}, DType::F32, device));
        running_var_ = &register_buffer("running_var", ones({features}, DType::F32, device));
        num_batches_tracked_ =
            &register_buffer("num_batches_tracked", zeros({}, DType::I64, device));
    }
}

Tensor BatchNorm::forward(const Tensor& input) {
    const std::int64_t want = spatial == 1 ? -1 : spatial + 2;  // 1d: [N, C] or [N, C, L]
    if ((want < 0 && input.dim() != 2 && input.dim() != 3) || (want > 0 && input.dim() != want)) {
        throw ValueError(type_name() + ": expected " +
                         (want < 0 ? std::string("2-d or 3-d") : std::to_string(want) + "-d") +
                         " input, got " + to_string(input.shape()));
    }
    double factor = momentum.value_or(0.0);
    if (is_training() && num_batches_tracked_ != nullptr) {
        const NoGradGuard no_grad;
        num_batches_tracked_->copy_(*num_batches_tracked_ + 1.0);
        if (!momentum) {  // the cumulative moving average
            factor = 1.0 / static_cast<double>(num_batches_tracked_->item<std::int64_t>());
        }
    }
    return F::batch_norm(input, running_mean(), running_var(), weight, bias,
                         is_training() || running_mean_ == nullptr, factor, eps);
}

std::string BatchNorm::type_name() const {
    return std::string("BatchNorm") + dims_suffix(spatial);
}

std::string BatchNorm::extra_repr() const {
    return std::to_string(num_features) + ", eps=" + detail::format_number(eps) +
           ", momentum=" + (momentum ? detail::format_number(*momentum) : "None") +
           ", affine=" + (weight.defined() ? "True" : "False") +
           ", track_running_stats=" + (running_mean_ ? "True" : "False");
}

GroupNorm::GroupNorm(std::int64_t groups, std::int64_t channels, double epsilon, bool affine,
                     Device device)
    : num_groups(groups), eps(epsilon) {
    detail::require_positive(groups, "GroupNorm", "num_groups");
    detail::require_positive(channels, "GroupNorm", "num_channels");
    if (channels % groups != 0) {
        throw ValueError("GroupNorm: num_channels must be divisible by num_groups");
    }
    if (affine) {
        register_parameter("weight", weight, ones({channels}, DType::F32, device));
        register_parameter("bias", bias, zeros({channels}, DType::F32, device));
    }
}

Tensor GroupNorm::forward(const Tensor& input) {
    return F::group_norm(input, num_groups, weight, bias, eps);
}

std::string GroupNorm::extra_repr() const {
    return std::to_string(num_groups) + ", " +
           std::to_string(weight.defined() ? weight.size(0) : 0) +
           ", eps=" + detail::format_number(eps) +
           ", affine=" + (weight.defined() ? "True" : "False");
}

}  // namespace kael::nn

// Convolution as sliding windows and one matrix product (nn_conv.h), and padding by mode.
// The windows are a strided view of the input copied once into [N * positions, C * kernel]
// rows, so the product is one large GEMM on any device (cuBLAS, OpenBLAS) rather than one per
// sample.
#include <algorithm>
#include <string>
#include <vector>

#include "kael/autograd.h"
#include "kael/nn_conv.h"
#include "kael/nn_functional.h"
#include "nn_internal.h"

namespace kael::nn::functional {

namespace {

std::int64_t product(const Shape& sizes) {
    std::int64_t result = 1;
    for (const std::int64_t size : sizes) {
        result *= size;
    }
    return result;
}

// sliding_windows' adjoint for grad [N, *O, C, *K] as one scatter_add_ of every window element
// onto its input position (recorded, so it differentiates again; in-place adds on strided
// views of the result would not be).
Tensor windows_added_back(const Tensor& grad, const Shape& input_shape, const Shape& kernel,
                          const Shape& stride, const Shape& dilation) {
    const auto d = static_cast<std::int64_t>(kernel.size());
    Shape plane{1, 1};
    std::int64_t cells = 1;
    for (std::int64_t i = 0; i < d; ++i) {
        plane.push_back(input_shape[static_cast<std::size_t>(i) + 2]);
        cells *= plane.back();
    }
    const std::int64_t rows = input_shape[0] * input_shape[1];
    Tensor places;
    {
        const NoGradGuard no_grad;
        places = sliding_windows(arange_int(0, cells, 1, DType::I64, grad.device()).reshape(plane),
                                 kernel, stride, dilation)
                     .reshape({1, -1})
                     .expand({rows, -1});
    }
    Shape order{0, d + 1};  // [N, C, *O, *K]
    for (std::int64_t i = 0; i < d; ++i) {
        order.push_back(i + 1);
    }
    for (std::int64_t i = 0; i < d; ++i) {
        order.push_back(d + 2 + i);
    }
    Tensor result = zeros({rows, cells}, grad.dtype(), grad.device());
    scatter_add_(result, 1, places, grad.permute(order).reshape({rows, -1}));
    return result.reshape(input_shape);
}

// The windows [N, *O, C, *K] added back onto a zero [N, C, *S] at the positions they were read
// from (sliding_windows' adjoint), in place through strided views: not recorded.
Tensor windows_folded(const Tensor& grad, const Shape& input_shape, const Shape& kernel,
                      const Shape& stride, const Shape& dilation) {
    const std::size_t d = kernel.size();
    Shape out(d);
    for (std::size_t i = 0; i < d; ++i) {
        out[i] = grad.size(static_cast<std::int64_t>(i) + 1);
    }
    // Each kernel offset's plane of windows adds back onto the strided input positions
    // it was read from, [N, *O, C] permuted to [N, C, *O]. bf16/f16 add in f32 and round once
    // (each add rounded to 8 bits lost the gradient's digits, beside cuDNN's).
    const DType sum_dtype = is_low_precision(grad.dtype()) ? DType::F32 : grad.dtype();
    Tensor result = zeros(input_shape, sum_dtype, grad.device());
    Shape order{0, static_cast<std::int64_t>(d) + 1};
    for (std::size_t i = 0; i < d; ++i) {
        order.push_back(static_cast<std::int64_t>(i) + 1);
    }
    Shape offset(d, 0);
    for (std::int64_t k = 0; k < product(kernel); ++k) {
        Tensor target = result;
        Tensor part = grad;
        for (std::size_t i = d; i-- > 0;) {
            const std::int64_t start = offset[i] * dilation[i];
            target = target.slice(static_cast<std::int64_t>(i) + 2, start,
                                  start + stride[i] * (out[i] - 1) + 1, stride[i]);
            part = part.select(static_cast<std::int64_t>(d + 2 + i), offset[i]);
        }
        add_(target, part.permute(order));
        for (std::size_t i = d; i-- > 0;) {  // the next offset, last dim fastest
            if (++offset[i] < kernel[i]) {
                break;
            }
            offset[i] = 0;
        }
    }
    return result.to(grad.dtype());
}

}  // namespace

}  // namespace kael::nn::functional

namespace kael::nn::detail {

Shape per_spatial_dim(const Shape& sizes, std::int64_t spatial, const char* op, const char* field) {
    if (sizes.size() == 1) {
        return Shape(static_cast<std::size_t>(spatial), sizes[0]);
    }
    if (static_cast<std::int64_t>(sizes.size()) != spatial) {
        throw ValueError(std::string(op) + ": " + field + " needs 1 or " + std::to_string(spatial) +
                         " numbers, got " + std::to_string(sizes.size()));
    }
    return sizes;
}

}  // namespace kael::nn::detail

namespace kael::nn::functional {

using detail::per_spatial_dim;

Tensor sliding_windows(const Tensor& input, const Shape& kernel, const Shape& stride,
                       const Shape& dilation) {
    const std::size_t d = kernel.size();
    if (d < 1 || d > 3 || input.dim() != static_cast<std::int64_t>(d) + 2 || stride.size() != d ||
        dilation.size() != d) {
        throw ValueError(
            "sliding_windows: needs [N, C, *spatial] with 1-3 spatial dims and a "
            "kernel, stride and dilation per spatial dim; got input " +
            to_string(input.shape()) + " and kernel " + to_string(kernel));
    }
    Shape shape{input.size(0)};
    const Shape& from = input.strides();
    Shape strides{from[0]};
    Shape out(d);
    for (std::size_t i = 0; i < d; ++i) {
        const std::int64_t size = input.size(static_cast<std::int64_t>(i) + 2);
        const std::int64_t span = dilation[i] * (kernel[i] - 1) + 1;
        if (kernel[i] < 1 || stride[i] < 1 || dilation[i] < 1 || size < span) {
            throw ValueError("sliding_windows: a kernel of " + to_string(kernel) + " (dilation " +
                             to_string(dilation) + ") does not fit input " +
                             to_string(input.shape()));
        }
        out[i] = (size - span) / stride[i] + 1;
        shape.push_back(out[i]);
        strides.push_back(from[i + 2] * stride[i]);
    }
    shape.push_back(input.size(1));
    strides.push_back(from[1]);
    for (std::size_t i = 0; i < d; ++i) {
        shape.push_back(kernel[i]);
        strides.push_back(from[i + 2] * dilation[i]);
    }
    Tensor windows = empty(shape, input.dtype(), input.device());
    {
        const NoGradGuard no_grad;
        windows.copy_(input.detach().as_strided(shape, strides, input.offset()));
    }
    const Shape input_shape = input.shape();
    autograd::record_function(
        {windows}, {input}, "sliding_windows", [=](const std::vector<Tensor>& grads) {
            const Tensor& grad = grads[0];
            if (!grad.defined()) {
                return std::vector<Tensor>{Tensor()};
            }
            if (is_grad_enabled()) {  // create_graph: one differentiable scatter_add_
                return std::vector<Tensor>{
                    windows_added_back(grad, input_shape, kernel, stride, dilation)};
            }
            return std::vector<Tensor>{windows_folded(grad, input_shape, kernel, stride, dilation)};
        });
    return windows;
}

Tensor pad(const Tensor& input, const Shape& amounts, const std::string& mode, double value) {
    if (mode == "constant") {
        return pad(input, amounts, value);
    }
    if (mode != "reflect" && mode != "replicate" && mode != "circular") {
        throw ValueError(
            "pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', "
            "got '" +
            mode + "'");
    }
    if (amounts.size() % 2 != 0 || static_cast<std::int64_t>(amounts.size()) > 2 * input.dim()) {
        throw ValueError("pad: needs (before, after) pairs for at most " +
                         std::to_string(input.dim()) + " dims");
    }
    Tensor result = input;
    for (std::size_t pair = 0; pair < amounts.size() / 2; ++pair) {
        const std::int64_t dim = input.dim() - 1 - static_cast<std::int64_t>(pair);
        const std::int64_t before = amounts[2 * pair];
        const std::int64_t after = amounts[2 * pair + 1];
        const std::int64_t size = result.size(dim);
        const std::int64_t most = mode == "reflect" ? size - 1 : mode == "circular" ? size : -1;
        if (before < 0 || after < 0 || (most >= 0 && (before > most || after > most))) {
            throw ValueError("pad: " + mode + " padding of (" + std::to_string(before) + ", " +
                             std::to_string(after) + ") does not fit dim " + std::to_string(dim) +
                             " of size " + std::to_string(size));
        }
        std::vector<Tensor> parts;
        if (mode == "reflect") {  // the edge element is not repeated
            parts = {flip(narrow(result, dim, 1, before), {dim}), result,
                     flip(narrow(result, dim, size - 1 - after, after), {dim})};
        } else if (mode == "replicate") {
            Shape edge = result.shape();
            edge[static_cast<std::size_t>(dim)] = before;
            Shape tail = result.shape();
            tail[static_cast<std::size_t>(dim)] = after;
            parts = {narrow(result, dim, 0, 1).expand(edge), result,
                     narrow(result, dim, size - 1, 1).expand(tail)};
        } else {
            parts = {narrow(result, dim, size - before, before), result,
                     narrow(result, dim, 0, after)};
        }
        result = cat(parts, dim);
    }
    return result;
}

}  // namespace kael::nn::functional

namespace kael::nn::detail {

Tensor windows_folded(const Tensor& windows, const Shape& shape, const Shape& kernel,
                      const Shape& stride, const Shape& dilation) {
    return functional::windows_folded(windows, shape, kernel, stride, dilation);
}

Tensor composed_conv(const ConvCall& call) {
    using functional::pad;
    using functional::product;
    using functional::sliding_windows;
    const Tensor& weight = call.weight;
    const std::int64_t d = weight.dim() - 2;
    const std::int64_t out_channels = weight.size(0);
    const std::int64_t groups = call.groups;
    Tensor x = call.input;
    if (std::any_of(call.before.begin(), call.before.end(),
                    [](std::int64_t p) { return p != 0; }) ||
        std::any_of(call.after.begin(), call.after.end(), [](std::int64_t p) { return p != 0; })) {
        Shape pairs;
        for (std::size_t i = call.before.size(); i-- > 0;) {
            pairs.insert(pairs.end(), {call.before[i], call.after[i]});
        }
        x = pad(x, pairs, 0.0);
    }
    const Shape kernel(weight.shape().begin() + 2, weight.shape().end());
    const Tensor windows =
        sliding_windows(x, kernel, call.stride, call.dilation);  // [N, *O, C, *K]
    const std::int64_t batch = x.size(0);
    const Shape out(windows.shape().begin() + 1, windows.shape().begin() + 1 + d);
    const std::int64_t rows = batch * product(out);
    const std::int64_t per_group = weight.size(1) * product(kernel);
    Tensor result;  // [rows, out_channels]
    if (groups == 1) {
        result = linear(windows.reshape({rows, per_group}),
                        weight.reshape({out_channels, per_group}), call.bias);
    } else {
        const Tensor grouped = windows.reshape({rows, groups, per_group}).permute({1, 0, 2});
        const Tensor filters =
            weight.reshape({groups, out_channels / groups, per_group}).transpose(1, 2);
        result = matmul(grouped, filters).permute({1, 0, 2}).reshape({rows, out_channels});
        if (call.bias.defined()) {
            result = result + call.bias;
        }
    }
    Shape shape{batch};
    shape.insert(shape.end(), out.begin(), out.end());
    shape.push_back(out_channels);
    Shape order{0, d + 1};
    for (std::int64_t i = 0; i < d; ++i) {
        order.push_back(i + 1);
    }
    return result.reshape(shape).permute(order).contiguous();
}

}  // namespace kael::nn::detail

namespace kael::nn::functional {

namespace {

// Checks the operands and runs the device plugin's convolution where it has one, else the
// composed one; before/after: zero padding of each spatial dim.
Tensor convolve(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
                const Shape& before, const Shape& after, const Shape& dilation,
                std::int64_t groups) {
    const std::int64_t d = weight.dim() - 2;
    const char* op = d == 1 ? "conv1d" : d == 2 ? "conv2d" : "conv3d";
    if (input.dim() == d + 1) {  // unbatched
        return convolve(input.unsqueeze(0), weight, bias, stride, before, after, dilation, groups)
            .squeeze(0);
    }
    const std::int64_t channels = input.dim() == d + 2 ? input.size(1) : -1;
    const std::int64_t out_channels = weight.size(0);
    if (groups < 1 || channels != weight.size(1) * groups || out_channels % groups != 0) {
        throw ValueError(std::string(op) + ": input " + to_string(input.shape()) +
                         " does not match weight " + to_string(weight.shape()) +
                         " with groups=" + std::to_string(groups) + " (expected [N, " +
                         std::to_string(weight.size(1) * groups) + ", *spatial])");
    }
    if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out_channels)) {
        throw ValueError(std::string(op) + ": bias must be [" + std::to_string(out_channels) +
                         "], got " + to_string(bias.shape()));
    }
    const detail::ConvCall call{input,
                                weight,
                                bias,
                                per_spatial_dim(stride, d, op, "stride"),
                                per_spatial_dim(before, d, op, "padding"),
                                per_spatial_dim(after, d, op, "padding"),
                                per_spatial_dim(dilation, d, op, "dilation"),
                                groups,
                                op};
    if (Tensor result = detail::plugin_conv(call); result.defined()) {
        return result;
    }
    if (is_low_precision(input.dtype()) && weight.dtype() == input.dtype() &&
        (!bias.defined() || bias.dtype() == input.dtype())) {
        // bf16/f16 the plugin declines: the convolution of f32 copies (the plugin's own where it
        // takes f32), rounded once, as a library computing in f32 would; composed in the dtype,
        // every product and window sum was rounded on the way.
        detail::ConvCall wide = call;
        wide.input = input.to(DType::F32);
        wide.weight = weight.to(DType::F32);
        wide.bias = bias.defined() ? bias.to(DType::F32) : Tensor();
        Tensor result = detail::plugin_conv(wide);
        return (result.defined() ? result : detail::composed_conv(wide)).to(input.dtype());
    }
    return detail::composed_conv(call);
}

}  // namespace

Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
            const Shape& padding, const Shape& dilation, std::int64_t groups) {
    if (weight.dim() < 3 || weight.dim() > 5) {
        throw ValueError(
            "conv: weight must be [out, in / groups, *kernel] with 1-3 kernel dims, got " +
            to_string(weight.shape()));
    }
    return convolve(input, weight, bias, stride, padding, padding, dilation, groups);
}

Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
            const std::string& padding, const Shape& dilation, std::int64_t groups) {
    const std::int64_t d = weight.dim() - 2;
    if (padding == "valid") {
        return conv(input, weight, bias, stride, Shape{0}, dilation, groups);
    }
    if (padding != "same") {
        throw ValueError("conv: padding must be 'same', 'valid' or sizes, got '" + padding + "'");
    }
    const auto spatial = static_cast<std::size_t>(std::max<std::int64_t>(d, 1));
    const Shape steps =
        per_spatial_dim(stride, static_cast<std::int64_t>(spatial), "conv", "stride");
    if (std::any_of(steps.begin(), steps.end(), [](std::int64_t s) { return s != 1; })) {
        throw ValueError("conv: padding='same' is not supported for strided convolutions");
    }
    const Shape dilations =
        per_spatial_dim(dilation, static_cast<std::int64_t>(spatial), "conv", "dilation");
    Shape before;  // the extra element of an odd total goes after, as PyTorch's
    Shape after;
    for (std::size_t i = 0; i < spatial; ++i) {
        const std::int64_t total =
            dilations[i] * (weight.size(static_cast<std::int64_t>(i) + 2) - 1);
        before.push_back(total / 2);
        after.push_back(total - total / 2);
    }
    return convolve(input, weight, bias, stride, before, after, dilation, groups);
}

}  // namespace kael::nn::functional

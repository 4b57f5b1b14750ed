// Transposed convolution (the gradient of a convolution for its input) and fold: the input's
// channels multiplied by the weight into windows of the output, one GEMM for the batch, then
// the windows summed where they lie (fold_windows, sliding_windows' adjoint). Differentiable
// on every device.
#include <string>
#include <vector>

#include "kael/autograd.h"
#include "kael/nn_conv.h"
#include "kael/nn_functional.h"
#include "nn_internal.h"

namespace kael::nn::functional {

namespace {

std::int64_t product(const Shape& sizes, std::size_t from = 0) {
    std::int64_t result = 1;
    for (std::size_t i = from; i < sizes.size(); ++i) {
        result *= sizes[i];
    }
    return result;
}

}  // namespace

Tensor fold_windows(const Tensor& windows, const Shape& shape, const Shape& kernel,
                    const Shape& stride, const Shape& dilation) {
    const std::size_t d = kernel.size();
    bool fits = windows.dim() == static_cast<std::int64_t>(2 * d + 2) && shape.size() == d + 2 &&
                shape[0] == windows.size(0) &&
                shape[1] == windows.size(static_cast<std::int64_t>(d) + 1);
    for (std::size_t i = 0; fits && i < d; ++i) {
        const std::int64_t span = dilation[i] * (kernel[i] - 1) + 1;
        fits =
            kernel[i] == windows.size(static_cast<std::int64_t>(d + 2 + i)) &&
            shape[i + 2] >= span &&
            (shape[i + 2] - span) / stride[i] + 1 == windows.size(static_cast<std::int64_t>(i) + 1);
    }
    if (!fits) {
        throw ValueError("fold: windows " + to_string(windows.shape()) +
                         " do not tile an output of " + to_string(shape) + " with kernel " +
                         to_string(kernel) + ", stride " + to_string(stride) + ", dilation " +
                         to_string(dilation));
    }
    Tensor result;
    {
        const NoGradGuard no_grad;
        result = detail::windows_folded(windows.detach(), shape, kernel, stride, dilation);
    }
    // Its gradient is sliding_windows itself, recorded, so this differentiates to any order.
    autograd::record_function({result}, {windows}, "fold", [=](const std::vector<Tensor>& grads) {
        if (!grads[0].defined()) {
            return std::vector<Tensor>{Tensor()};
        }
        return std::vector<Tensor>{sliding_windows(grads[0], kernel, stride, dilation)};
    });
    return result;
}

Tensor conv_transpose(const Tensor& input, const Tensor& weight, const Tensor& bias,
                      const Shape& stride, const Shape& padding, const Shape& output_padding,
                      std::int64_t groups, const Shape& dilation) {
    const std::int64_t d = weight.dim() - 2;
    const char* op = d == 1 ? "conv_transpose1d" : d == 2 ? "conv_transpose2d" : "conv_transpose3d";
    if (d < 1 || d > 3) {
        throw ValueError(
            "conv_transpose: weight must be [in, out / groups, *kernel] with 1-3 "
            "kernel dims, got " +
            to_string(weight.shape()));
    }
    if (input.dim() == d + 1) {  // unbatched
        return conv_transpose(input.unsqueeze(0), weight, bias, stride, padding, output_padding,
                              groups, dilation)
            .squeeze(0);
    }
    const std::int64_t channels = input.dim() == d + 2 ? input.size(1) : -1;
    if (groups < 1 || channels != weight.size(0) || channels % groups != 0) {
        throw ValueError(std::string(op) + ": input " + to_string(input.shape()) +
                         " does not match weight " + to_string(weight.shape()) +
                         " with groups=" + std::to_string(groups));
    }
    const std::int64_t out_channels = weight.size(1) * groups;
    if (bias.defined() && (bias.dim() != 1 || bias.size(0) != out_channels)) {
        throw ValueError(std::string(op) + ": bias must be [" + std::to_string(out_channels) +
                         "], got " + to_string(bias.shape()));
    }
    const Shape steps = detail::per_spatial_dim(stride, d, op, "stride");
    const Shape pads = detail::per_spatial_dim(padding, d, op, "padding");
    const Shape extra = detail::per_spatial_dim(output_padding, d, op, "output_padding");
    const Shape dilations = detail::per_spatial_dim(dilation, d, op, "dilation");
    const Shape kernel(weight.shape().begin() + 2, weight.shape().end());
    const std::int64_t batch = input.size(0);
    Shape positions;  // the input's spatial sizes: the windows' count per dim
    Shape full{batch, out_channels};
    for (std::int64_t i = 0; i < d; ++i) {
        const auto u = static_cast<std::size_t>(i);
        if (extra[u] < 0 || (extra[u] >= steps[u] && extra[u] >= dilations[u])) {
            throw ValueError(std::string(op) +
                             ": output_padding must be smaller than stride or dilation");
        }
        positions.push_back(input.size(2 + i));
        full.push_back((input.size(2 + i) - 1) * steps[u] + dilations[u] * (kernel[u] - 1) + 1 +
                       extra[u]);
        if (full.back() - 2 * pads[u] < 0) {
            throw ValueError(std::string(op) + ": padding leaves no output for input " +
                             to_string(input.shape()));
        }
    }
    // [N, *I, C] rows times the weight: each input position's window of the output.
    Shape order{0};
    for (std::int64_t i = 0; i < d; ++i) {
        order.push_back(i + 2);
    }
    order.push_back(1);
    const std::int64_t rows = batch * product(positions);
    const std::int64_t per_group = weight.size(1) * product(kernel);
    const Tensor x = input.permute(order).reshape({rows, channels});
    Tensor cells;  // [rows, out_channels * K]
    if (groups == 1) {
        cells = matmul(x, weight.reshape({channels, per_group}));
    } else {
        cells = matmul(x.reshape({rows, groups, channels / groups}).permute({1, 0, 2}),
                       weight.reshape({groups, channels / groups, per_group}))
                    .permute({1, 0, 2})
                    .reshape({rows, groups * per_group});
    }
    Shape windows{batch};
    windows.insert(windows.end(), positions.begin(), positions.end());
    windows.push_back(out_channels);
    windows.insert(windows.end(), kernel.begin(), kernel.end());
    Tensor result = fold_windows(cells.reshape(windows), full, kernel, steps, dilations);
    for (std::int64_t i = 0; i < d; ++i) {
        const auto u = static_cast<std::size_t>(i);
        result = narrow(result, 2 + i, pads[u], full[u + 2] - 2 * pads[u]);
    }
    if (bias.defined()) {
        Shape view(static_cast<std::size_t>(d + 2), 1);
        view[1] = out_channels;
        result = result + bias.reshape(view);
    }
    return result.contiguous();
}

}  // namespace kael::nn::functional

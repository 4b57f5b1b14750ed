// The fused kernels of a decoding step (KAEL_EXTENSION_DECODING): each is the composed ops'
// value, run as one launch where the device's plugin has the kernel and takes the call.
#include <vector>

#include "backend.h"
#include "kael/autocast.h"
#include "kael/autograd.h"
#include "kael/fast.h"
#include "kael/ops.h"
#include "kernel_calls.h"

namespace kael {

namespace detail {

const kael_decoding* decoding_kernels(const Device& device) {
    return static_cast<const kael_decoding*>(
        backend_for(device).extension(KAEL_EXTENSION_DECODING, sizeof(kael_decoding)));
}

}  // namespace detail

namespace {

// Whether t is undefined, or a contiguous [size] vector of dtype.
bool vector_or_none(const Tensor& t, std::int64_t size, DType dtype) {
    return !t.defined() ||
           (t.dim() == 1 && t.size(0) == size && t.dtype() == dtype && t.is_contiguous());
}

}  // namespace

Tensor layer_norm_linear(const Tensor& x, const Tensor& norm_weight, const Tensor& norm_bias,
                         double eps, const Tensor& weight, const Tensor& bias,
                         Activation activation, const Tensor& residual) {
    const auto composed = [&] {
        return linear(layer_norm(x, norm_weight, norm_bias, eps), weight, bias, activation,
                      residual);
    };
    std::vector<Tensor> operands{x, weight};
    for (const Tensor* optional : {&norm_weight, &norm_bias, &bias, &residual}) {
        if (optional->defined()) {
            operands.push_back(*optional);
        }
    }
    bool plain = x.dim() >= 2 && weight.dim() == 2 && is_floating(x.dtype()) && x.numel() > 0 &&
                 x.size(-1) == weight.size(1) && x.is_contiguous() && weight.is_contiguous() &&
                 !autocast::applies(x);
    for (const Tensor& operand : operands) {
        plain = plain && operand.dtype() == x.dtype() && operand.device() == x.device() &&
                !(is_grad_enabled() && operand.requires_grad());
    }
    const std::int64_t inner = plain ? x.size(-1) : 0;
    const std::int64_t columns = plain ? weight.size(0) : 0;
    Shape out_shape = x.shape();
    out_shape.back() = columns;
    plain = plain && vector_or_none(norm_weight, inner, x.dtype()) &&
            vector_or_none(norm_bias, inner, x.dtype()) &&
            vector_or_none(bias, columns, x.dtype()) &&
            (!residual.defined() || (residual.shape() == out_shape && residual.is_contiguous()));
    const kael_decoding* plugin = plain ? detail::decoding_kernels(x.device()) : nullptr;
    if (plugin == nullptr || plugin->layer_norm_linear == nullptr) {
        return composed();
    }
    const std::int64_t rows = x.numel() / inner;
    Tensor out = empty(out_shape, x.dtype(), x.device());
    // weight [columns, inner], as a linear layer stores it
    const kael_matmul_sizes sizes = detail::linear_sizes(rows, inner, columns, false, false);
    const auto data = [](const Tensor& t) { return t.defined() ? t.device_data() : nullptr; };
    const kael_status status = plugin->layer_norm_linear(
        x.device().index, detail::abi(x.dtype()), x.device_data(), data(norm_weight),
        data(norm_bias), eps, weight.device_data(), data(bias), data(residual), out.device_data(),
        &sizes,
        activation == Activation::GeluTanh ? KAEL_ACTIVATION_GELU_TANH : KAEL_ACTIVATION_NONE);
    if (!detail::backend_for(x.device()).served(status, "layer_norm_linear")) {
        return composed();
    }
    return out;
}

}  // namespace kael

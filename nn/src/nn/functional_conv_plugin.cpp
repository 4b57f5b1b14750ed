// Convolutions on the device plugin's KAEL_EXTENSION_CONVOLUTION (oneDNN on the cpu plugin),
// recorded for autograd with the plugin's two backward entries. A plugin without the
// extension, or one declining a call (a dtype it lacks), leaves it to the composed path.
#include <algorithm>
#include <vector>

#include "backend.h"
#include "kael/autograd.h"
#include "kernel_calls.h"
#include "nn_internal.h"

namespace kael::nn::detail {

namespace {

kael_conv_geometry geometry_of(const ConvCall& call, const Shape& output) {
    kael_conv_geometry g{};
    g.struct_size = sizeof(kael_conv_geometry);
    g.spatial = static_cast<std::int32_t>(call.weight.dim() - 2);
    g.precision = static_cast<std::int32_t>(float32_matmul_precision());
    g.batch = call.input.size(0);
    g.in_channels = call.input.size(1);
    g.out_channels = call.weight.size(0);
    g.groups = call.groups;
    for (std::int32_t i = 0; i < g.spatial; ++i) {
        const auto u = static_cast<std::size_t>(i);
        g.input[i] = call.input.size(2 + i);
        g.kernel[i] = call.weight.size(2 + i);
        g.output[i] = output[u + 2];  // output is [N, OC, *spatial]
        g.stride[i] = call.stride[u];
        g.padding_before[i] = call.before[u];
        g.padding_after[i] = call.after[u];
        g.dilation[i] = call.dilation[u];
    }
    return g;
}

}  // namespace

std::vector<Tensor> differentiable_gradients(const ComposedCell& composed,
                                             const std::vector<Tensor>& grads,
                                             const std::vector<Tensor>& inputs) {
    // Each input through a view of its own: an input computed from another (a GRU step's
    // h_gates from its state) then gets its own uses' gradient, not the other's once more.
    std::vector<Tensor> own;
    std::vector<Tensor> wanted;
    for (const Tensor& input : inputs) {
        own.push_back(input.requires_grad() ? input.view(input.shape()) : input);
        if (input.requires_grad()) {
            wanted.push_back(own.back());
        }
    }
    const std::vector<Tensor> outputs = composed(own);
    std::vector<Tensor> through;
    std::vector<Tensor> given;
    for (std::size_t k = 0; k < grads.size(); ++k) {
        if (grads[k].defined()) {
            through.push_back(outputs[k]);
            given.push_back(grads[k]);
        }
    }
    const std::vector<Tensor> found = autograd::grad(through, given, wanted, true, true, true);
    std::vector<Tensor> result;
    std::size_t next = 0;
    for (const Tensor& input : inputs) {
        result.push_back(input.requires_grad() ? found[next++] : Tensor());
    }
    return result;
}

const void* plugin_extension(const Device& device, const char* name, std::size_t least_size) {
    return kael::detail::backend_for(device).extension(name, least_size);
}

namespace {

// The device plugin's convolution extension, or null where the core composes convolutions.
const kael_convolution* convolution_extension(const Device& device) {
    return static_cast<const kael_convolution*>(
        plugin_extension(device, KAEL_EXTENSION_CONVOLUTION, sizeof(kael_convolution)));
}

}  // namespace

Tensor plugin_conv(const ConvCall& call) {
    const Device device = call.input.device();
    const kael_convolution* plugin = convolution_extension(device);
    if (plugin == nullptr || call.input.dtype() != call.weight.dtype() ||
        (call.bias.defined() && call.bias.dtype() != call.weight.dtype()) ||
        call.weight.device() != device || (call.bias.defined() && call.bias.device() != device)) {
        return {};  // the composed path checks and promotes as the ops do
    }
    Shape output{call.input.size(0), call.weight.size(0)};
    for (std::int64_t i = 0; i + 2 < call.weight.dim(); ++i) {
        const auto u = static_cast<std::size_t>(i);
        const std::int64_t span = call.dilation[u] * (call.weight.size(2 + i) - 1) + 1;
        const std::int64_t room = call.input.size(2 + i) + call.before[u] + call.after[u] - span;
        if (room < 0) {
            return {};  // the composed path says what does not fit
        }
        output.push_back(room / call.stride[u] + 1);
    }
    const kael_conv_geometry g = geometry_of(call, output);
    const kael_dtype dtype = kael::detail::abi(call.input.dtype());
    const kael::detail::Backend* backend = &kael::detail::backend_for(device);
    const Tensor input = call.input.contiguous();
    const Tensor weight = call.weight.contiguous();
    const Tensor bias = call.bias.defined() ? call.bias.contiguous() : Tensor();
    Tensor result = empty(output, input.dtype(), device);
    if (result.numel() > 0) {
        const kael_status status =
            plugin->forward(device.index, dtype, &g, input.device_data(), weight.device_data(),
                            bias.defined() ? bias.device_data() : nullptr, result.device_data());
        if (!backend->served(status, call.op)) {
            return {};
        }
    } else if (bias.defined()) {
        result.fill_(0);
    }
    std::vector<Tensor> inputs{call.input, call.weight};
    if (call.bias.defined()) {
        inputs.push_back(call.bias);
    }
    autograd::record_function({result}, inputs, call.op, [=](const std::vector<Tensor>& grads) {
        const Tensor& gradient = grads[0];
        if (!gradient.defined()) {
            return std::vector<Tensor>(inputs.size());
        }
        if (is_grad_enabled()) {  // create_graph: differentiate the composed form
            const auto composed = [call](const std::vector<Tensor>& in) {
                ConvCall own = call;
                own.input = in[0];
                own.weight = in[1];
                own.bias = call.bias.defined() ? in[2] : Tensor();
                return std::vector<Tensor>{composed_conv(own)};
            };
            return differentiable_gradients(composed, {gradient}, inputs);
        }
        const Tensor upstream = gradient.contiguous();
        // Only the gradients an input needs (the first layer's input usually needs none).
        Tensor grad_input;
        Tensor grad_weight;
        Tensor grad_bias;
        if (inputs[0].requires_grad()) {
            grad_input = zeros(input.shape(), input.dtype(), device);
            if (upstream.numel() > 0) {
                backend->check(
                    plugin->backward_input(device.index, dtype, &g, upstream.device_data(),
                                           weight.device_data(), grad_input.device_data()),
                    call.op);
            }
        }
        if (inputs[1].requires_grad() || (bias.defined() && inputs[2].requires_grad())) {
            grad_weight = zeros(weight.shape(), weight.dtype(), device);
            grad_bias = bias.defined() ? zeros(bias.shape(), bias.dtype(), device) : Tensor();
            if (upstream.numel() > 0) {
                backend->check(plugin->backward_weight(
                                   device.index, dtype, &g, upstream.device_data(),
                                   input.device_data(), grad_weight.device_data(),
                                   grad_bias.defined() ? grad_bias.device_data() : nullptr),
                               call.op);
            }
        }
        std::vector<Tensor> result_grads{grad_input, grad_weight};
        if (bias.defined()) {
            result_grads.push_back(grad_bias);
        }
        return result_grads;
    });
    return result;
}

}  // namespace kael::nn::detail

namespace kael::nn::functional {

std::string convolution_library(const Device& device) {
    const kael_convolution* plugin = detail::convolution_extension(device);
    return plugin != nullptr && plugin->library != nullptr ? plugin->library : "";
}

}  // namespace kael::nn::functional

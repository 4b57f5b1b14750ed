// Pooling on the device plugin's KAEL_EXTENSION_POOLING (oneDNN on the cpu plugin), recorded
// for autograd with the plugin's backward and max pooling's workspace. A plugin without the
// extension, or declining a call, leaves it to the sliced path (functional_pool_slices.cpp).
#include <vector>

#include "backend.h"
#include "kael/autograd.h"
#include "kernel_calls.h"
#include "nn_internal.h"

namespace kael::nn::detail {

Tensor plugin_pool(const Tensor& x, const PoolGeometry& g, std::int32_t kind,
                   const Recompute& composed) {
    const Device device = x.device();
    const auto* plugin = static_cast<const kael_pooling*>(
        plugin_extension(device, KAEL_EXTENSION_POOLING, sizeof(kael_pooling)));
    if (plugin == nullptr || x.numel() == 0) {
        return {};
    }
    kael_pool_geometry geometry{};
    geometry.struct_size = sizeof(kael_pool_geometry);
    geometry.spatial = static_cast<std::int32_t>(g.kernel.size());
    geometry.kind = kind;
    geometry.batch = x.size(0);
    geometry.channels = x.size(1);
    Shape output{x.size(0), x.size(1)};
    for (std::size_t i = 0; i < g.kernel.size(); ++i) {
        geometry.input[i] = x.size(static_cast<std::int64_t>(i) + 2);
        geometry.kernel[i] = g.kernel[i];
        geometry.output[i] = g.out[i];
        geometry.stride[i] = g.stride[i];
        // regular_pairs and extra_pairs run from the last dim backwards, as pad()'s.
        const std::size_t pair = 2 * (g.kernel.size() - 1 - i);
        geometry.padding_before[i] = g.regular_pairs[pair];
        geometry.padding_after[i] = g.regular_pairs[pair + 1] + g.extra_pairs[pair + 1];
        geometry.dilation[i] = g.dilation[i];
        output.push_back(g.out[i]);
    }
    const kael_dtype dtype = kael::detail::abi(x.dtype());
    const std::int64_t bytes = plugin->workspace_bytes(device.index, dtype, &geometry);
    if (bytes < 0) {
        return {};
    }
    const kael::detail::Backend* backend = &kael::detail::backend_for(device);
    const Tensor input = x.contiguous();
    Tensor result = empty(output, x.dtype(), device);
    const Tensor workspace = empty({std::max<std::int64_t>(bytes, 1)}, DType::U8, device);
    const kael_status status = plugin->forward(device.index, dtype, &geometry, input.device_data(),
                                               result.device_data(), workspace.device_data());
    if (!backend->served(status, kind == KAEL_POOL_MAX ? "max_pool" : "avg_pool")) {
        return {};
    }
    const Shape input_shape = x.shape();
    autograd::record_function(
        {result}, {x}, kind == KAEL_POOL_MAX ? "MaxPoolBackward" : "AvgPoolBackward",
        [=](const std::vector<Tensor>& grads) {
            const Tensor& grad = grads[0];
            if (!grad.defined()) {
                return std::vector<Tensor>{Tensor()};
            }
            if (is_grad_enabled()) {  // create_graph: differentiate the composed form
                return autograd::grad({composed(x)}, {grad}, {x}, true, true, true);
            }
            const Tensor upstream = grad.contiguous();
            Tensor grad_input = empty(input_shape, grad.dtype(), device);
            backend->check(plugin->backward(device.index, dtype, &geometry, upstream.device_data(),
                                            workspace.device_data(), grad_input.device_data()),
                           kind == KAEL_POOL_MAX ? "max_pool" : "avg_pool");
            return std::vector<Tensor>{grad_input};
        });
    return result;
}

}  // namespace kael::nn::detail

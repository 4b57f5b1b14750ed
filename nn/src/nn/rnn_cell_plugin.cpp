// The LSTM and GRU cells on the device plugin's KAEL_EXTENSION_RECURRENT (the shared tasks of
// tasks/recurrent.h on every bundled plugin): one launch a step forward and one backward, where
// the composed cell runs a dozen elementwise ops each way. A plugin without the extension, or
// declining a call, leaves the step to the composed cell.
#include <functional>
#include <vector>

#include "backend.h"
#include "kael/autograd.h"
#include "kernel_calls.h"
#include "nn_internal.h"

namespace kael::nn::detail {

namespace {

// Whether the operands make one cell call: one device and float dtype, both products' gates
// [*, gates * H] and a state [*, H] with the same leading dims.
bool one_call(const Tensor& x_gates, const Tensor& h_gates, const Tensor& state,
              std::int64_t gates) {
    const Device device = state.device();
    if (x_gates.device() != device || h_gates.device() != device ||
        x_gates.dtype() != state.dtype() || h_gates.dtype() != state.dtype() ||
        !is_floating(state.dtype()) || state.dim() < 1 || state.numel() == 0 ||
        x_gates.shape() != h_gates.shape() || x_gates.dim() != state.dim()) {
        return false;
    }
    Shape expected = state.shape();
    expected.back() *= gates;
    return x_gates.shape() == expected;
}

}  // namespace

void record_fused(
    const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs, const char* name,
    const ComposedCell& composed,
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& first_order) {
    autograd::record_function(outputs, inputs, name, [=](const std::vector<Tensor>& grads) {
        bool any = false;
        for (const Tensor& grad : grads) {
            any = any || grad.defined();
        }
        if (!any) {
            return std::vector<Tensor>(inputs.size());
        }
        if (!is_grad_enabled()) {
            return first_order(grads);
        }
        return differentiable_gradients(composed, grads, inputs);
    });
}

const kael_recurrent* recurrent_of(const Device& device) {
    return static_cast<const kael_recurrent*>(
        plugin_extension(device, KAEL_EXTENSION_RECURRENT, sizeof(kael_recurrent)));
}

std::vector<Tensor> plugin_lstm_cell(const Tensor& x_gates, const Tensor& h_gates,
                                     const Tensor& cell, const ComposedCell& composed) {
    const kael_recurrent* plugin =
        one_call(x_gates, h_gates, cell, 4) ? recurrent_of(cell.device()) : nullptr;
    if (plugin == nullptr) {
        return {};
    }
    const Device device = cell.device();
    const kael_dtype dtype = kael::detail::abi(cell.dtype());
    const std::int64_t hidden = cell.size(-1);
    const std::int64_t batch = cell.numel() / hidden;
    const Tensor xg = x_gates.contiguous();
    const Tensor hg = h_gates.contiguous();
    const Tensor previous = cell.contiguous();
    const Tensor hidden_out = empty(cell.shape(), cell.dtype(), device);
    const Tensor cell_out = empty(cell.shape(), cell.dtype(), device);
    const Tensor saved = empty(x_gates.shape(), cell.dtype(), device);
    const kael_status status = plugin->lstm_cell_forward(
        device.index, dtype, batch, hidden, xg.device_data(), hg.device_data(),
        previous.device_data(), hidden_out.device_data(), cell_out.device_data(),
        saved.device_data());
    const kael::detail::Backend* backend = &kael::detail::backend_for(device);
    if (!backend->served(status, "lstm_cell")) {
        return {};
    }
    const std::vector<Tensor> inputs{x_gates, h_gates, cell};
    // The backward keeps cell_out's data, not the recorded output (whose grad_fn it is).
    const Tensor kept_cell_out = cell_out.detach();
    record_fused(
        {hidden_out, cell_out}, inputs, "LstmCellBackward", composed,
        [=](const std::vector<Tensor>& grads) {
            const Tensor grad_hidden = grads[0].defined()
                                           ? grads[0].contiguous()
                                           : zeros(previous.shape(), previous.dtype(), device);
            const Tensor grad_cell_out = grads[1].defined() ? grads[1].contiguous() : Tensor();
            const Tensor grad_gates = empty(saved.shape(), saved.dtype(), device);
            const Tensor grad_cell = empty(previous.shape(), previous.dtype(), device);
            backend->check(
                plugin->lstm_cell_backward(
                    device.index, dtype, batch, hidden, saved.device_data(), previous.device_data(),
                    kept_cell_out.device_data(), grad_hidden.device_data(),
                    grad_cell_out.defined() ? grad_cell_out.device_data() : nullptr,
                    grad_gates.device_data(), grad_cell.device_data()),
                "lstm_cell");
            // Both products get the same gradient; two leaves must not share one tensor, which
            // accumulating into either's grad would write through.
            const bool both_leaves = inputs[0].is_leaf() && inputs[1].is_leaf();
            return std::vector<Tensor>{grad_gates, both_leaves ? grad_gates.clone() : grad_gates,
                                       grad_cell};
        });
    return {hidden_out, cell_out};
}

Tensor plugin_gru_cell(const Tensor& x_gates, const Tensor& h_gates, const Tensor& state,
                       const ComposedCell& composed) {
    const kael_recurrent* plugin =
        one_call(x_gates, h_gates, state, 3) ? recurrent_of(state.device()) : nullptr;
    if (plugin == nullptr) {
        return {};
    }
    const Device device = state.device();
    const kael_dtype dtype = kael::detail::abi(state.dtype());
    const std::int64_t hidden = state.size(-1);
    const std::int64_t batch = state.numel() / hidden;
    const Tensor xg = x_gates.contiguous();
    const Tensor hg = h_gates.contiguous();
    const Tensor previous = state.contiguous();
    const Tensor hidden_out = empty(state.shape(), state.dtype(), device);
    const Tensor saved = empty(x_gates.shape(), state.dtype(), device);
    const kael_status status = plugin->gru_cell_forward(
        device.index, dtype, batch, hidden, xg.device_data(), hg.device_data(),
        previous.device_data(), hidden_out.device_data(), saved.device_data());
    const kael::detail::Backend* backend = &kael::detail::backend_for(device);
    if (!backend->served(status, "gru_cell")) {
        return {};
    }
    const std::vector<Tensor> inputs{x_gates, h_gates, state};
    record_fused(
        {hidden_out}, inputs, "GruCellBackward", composed, [=](const std::vector<Tensor>& grads) {
            const Tensor grad_hidden = grads[0].contiguous();
            const Tensor grad_x_gates = empty(saved.shape(), saved.dtype(), device);
            const Tensor grad_h_gates = empty(saved.shape(), saved.dtype(), device);
            const Tensor grad_state = empty(previous.shape(), previous.dtype(), device);
            backend->check(
                plugin->gru_cell_backward(device.index, dtype, batch, hidden, saved.device_data(),
                                          hg.device_data(), previous.device_data(),
                                          grad_hidden.device_data(), grad_x_gates.device_data(),
                                          grad_h_gates.device_data(), grad_state.device_data()),
                "gru_cell");
            return std::vector<Tensor>{grad_x_gates, grad_h_gates, grad_state};
        });
    return hidden_out;
}

}  // namespace kael::nn::detail

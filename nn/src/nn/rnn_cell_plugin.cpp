// The LSTM cell on the device plugin's KAEL_EXTENSION_RECURRENT (the shared tasks of
// tasks/recurrent.h on every bundled plugin): one launch a step forward and one backward, where
// the composed cell runs a dozen elementwise ops each way. A plugin without the extension, or
// declining a call, leaves the step to the composed cell.
#include <vector>

#include "backend.h"
#include "kael/autograd.h"
#include "kernel_calls.h"
#include "nn_internal.h"

namespace kael::nn::detail {

namespace {

// Whether the three operands make one cell call: one device and float dtype, gates [*, 4H] of
// both products and a cell [*, H] with the same leading dims.
bool one_call(const Tensor& x_gates, const Tensor& h_gates, const Tensor& cell) {
    const Device device = cell.device();
    if (x_gates.device() != device || h_gates.device() != device ||
        x_gates.dtype() != cell.dtype() || h_gates.dtype() != cell.dtype() ||
        !is_floating(cell.dtype()) || cell.dim() < 1 || cell.numel() == 0 ||
        x_gates.shape() != h_gates.shape() || x_gates.dim() != cell.dim()) {
        return false;
    }
    Shape expected = cell.shape();
    expected.back() *= 4;
    return x_gates.shape() == expected;
}

}  // namespace

std::vector<Tensor> plugin_lstm_cell(
    const Tensor& x_gates, const Tensor& h_gates, const Tensor& cell,
    const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& composed) {
    if (!one_call(x_gates, h_gates, cell)) {
        return {};
    }
    const Device device = cell.device();
    const auto* plugin =
        static_cast<const kael_recurrent*>(plugin_extension(device, KAEL_EXTENSION_RECURRENT));
    if (plugin == nullptr || plugin->struct_size < sizeof(kael_recurrent)) {
        return {};
    }
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
    if (status == KAEL_STATUS_UNSUPPORTED) {
        return {};
    }
    const kael::detail::Backend* backend = &kael::detail::backend_for(device);
    backend->check(status, "lstm_cell");
    const std::vector<Tensor> inputs{x_gates, h_gates, cell};
    autograd::record_function(
        {hidden_out, cell_out}, inputs, "LstmCellBackward", [=](const std::vector<Tensor>& grads) {
            if (!grads[0].defined() && !grads[1].defined()) {
                return std::vector<Tensor>(3);
            }
            if (is_grad_enabled()) {  // create_graph: differentiate the composed cell
                std::vector<Tensor> outputs = composed(inputs);
                std::vector<Tensor> given;
                std::vector<Tensor> through;
                for (std::size_t k = 0; k < 2; ++k) {
                    if (grads[k].defined()) {
                        through.push_back(outputs[k]);
                        given.push_back(grads[k]);
                    }
                }
                std::vector<Tensor> wanted;
                for (const Tensor& input : inputs) {
                    if (input.requires_grad()) {
                        wanted.push_back(input);
                    }
                }
                const std::vector<Tensor> found =
                    autograd::grad(through, given, wanted, true, true, true);
                std::vector<Tensor> result;
                std::size_t next = 0;
                for (const Tensor& input : inputs) {
                    result.push_back(input.requires_grad() ? found[next++] : Tensor());
                }
                return result;
            }
            const Tensor grad_hidden = grads[0].defined()
                                           ? grads[0].contiguous()
                                           : zeros(hidden_out.shape(), hidden_out.dtype(), device);
            const Tensor grad_cell_out = grads[1].defined() ? grads[1].contiguous() : Tensor();
            Tensor grad_gates = empty(saved.shape(), saved.dtype(), device);
            const Tensor grad_cell = empty(previous.shape(), previous.dtype(), device);
            backend->check(
                plugin->lstm_cell_backward(
                    device.index, dtype, batch, hidden, saved.device_data(), previous.device_data(),
                    cell_out.device_data(), grad_hidden.device_data(),
                    grad_cell_out.defined() ? grad_cell_out.device_data() : nullptr,
                    grad_gates.device_data(), grad_cell.device_data()),
                "lstm_cell");
            // Both products get the same gradient; two leaves must not share one tensor,
            // which accumulating into either's grad would write through.
            const bool both_leaves = inputs[0].is_leaf() && inputs[1].is_leaf();
            return std::vector<Tensor>{grad_gates, both_leaves ? grad_gates.clone() : grad_gates,
                                       grad_cell};
        });
    return {hidden_out, cell_out};
}

}  // namespace kael::nn::detail

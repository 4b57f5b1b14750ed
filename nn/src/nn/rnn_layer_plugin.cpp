// A whole LSTM or GRU layer (one direction) over the plugin's fused cells, recorded as one
// autograd node: forward is one product and one cell launch a step, backward one cell launch
// and one product a step, then the hidden weights' and bias' gradients of every step as one
// product and one sum. Recorded step by step, every step also made and accumulated its own
// [gates * H, H] weight gradient (the LSTM ran at 0.33 of PyTorch's on an H100).
#include <cstdint>
#include <vector>

#include "backend.h"
#include "kael/autograd.h"
#include "kael/fast.h"
#include "kernel_calls.h"
#include "nn_internal.h"

namespace kael::nn::detail {

namespace {

// The recorded inputs' order: {x_gates, weight_hh, bias_hh, h0, c0}, undefined where absent.
enum Input : std::size_t { kXGates, kWeight, kBias, kHidden, kCell, kInputs };

bool one_layer(const RecurrentLayer& layer, std::int64_t gates) {
    const Tensor& x = layer.x_gates;
    const Tensor& h0 = layer.h0;
    if (x.dim() != 3 || x.size(0) == 0 || h0.dim() != 2 || h0.numel() == 0 ||
        !is_floating(x.dtype())) {
        return false;
    }
    const std::int64_t batch = h0.size(0);
    const std::int64_t hidden = h0.size(1);
    std::vector<Tensor> operands{layer.weight_hh, h0};
    if (layer.bias_hh.defined()) {
        operands.push_back(layer.bias_hh);
    }
    if (layer.lstm) {
        operands.push_back(layer.c0);
    }
    for (const Tensor& t : operands) {
        if (!t.defined() || t.device() != x.device() || t.dtype() != x.dtype()) {
            return false;
        }
    }
    return x.shape() == Shape{x.size(0), batch, gates * hidden} &&
           layer.weight_hh.shape() == Shape{gates * hidden, hidden} &&
           (!layer.bias_hh.defined() || layer.bias_hh.shape() == Shape{gates * hidden}) &&
           (!layer.lstm || layer.c0.shape() == h0.shape());
}

// Step t's rows of a contiguous [T, B, N] buffer: an address, where select() would make a
// view (a tensor and its shape and strides on the heap) for each of a step's half-dozen reads.
void* step_rows(const Tensor& steps, std::int64_t t) {
    return static_cast<char*>(steps.device_data()) + t * (steps.nbytes() / steps.size(0));
}

// a + b where both are defined, else the defined one, else zeros like like.
Tensor sum_of(const Tensor& a, const Tensor& b, const Tensor& like) {
    if (a.defined() && b.defined()) {
        return a + b;
    }
    if (a.defined() || b.defined()) {
        return (a.defined() ? a : b).contiguous();
    }
    return zeros(like.shape(), like.dtype(), like.device());
}

}  // namespace

std::vector<Tensor> plugin_recurrent_layer(const RecurrentLayer& layer,
                                           const ComposedCell& composed) {
    const std::int64_t gates = layer.lstm ? 4 : 3;
    const auto* plugin = one_layer(layer, gates) ? recurrent_of(layer.h0.device()) : nullptr;
    if (plugin == nullptr) {
        return {};
    }
    const Device device = layer.h0.device();
    const DType dtype = layer.h0.dtype();
    const kael_dtype abi = kael::detail::abi(dtype);
    const kael::detail::Backend* backend = &kael::detail::backend_for(device);
    const std::int64_t steps = layer.x_gates.size(0);
    const std::int64_t batch = layer.h0.size(0);
    const std::int64_t hidden = layer.h0.size(1);
    const bool lstm = layer.lstm;
    const bool reverse = layer.reverse;
    const char* what = lstm ? "lstm_cell" : "gru_cell";
    // The step the run's i-th call computes (a reverse layer runs from the last step).
    const auto step_at = [=](std::int64_t i) { return reverse ? steps - 1 - i : i; };

    Tensor outputs;
    Tensor cells;                                                  // LSTM: every step's cell state
    Tensor saved;                                                  // every step's activated gates
    std::vector<Tensor> h_gates(static_cast<std::size_t>(steps));  // GRU's backward reads them
    const Tensor x_gates = layer.x_gates.contiguous();
    const Tensor h0 = layer.h0.contiguous();
    const Tensor c0 = lstm ? layer.c0.contiguous() : Tensor();
    {
        const NoGradGuard no_grad;
        outputs = empty({steps, batch, hidden}, dtype, device);
        cells = lstm ? empty({steps, batch, hidden}, dtype, device) : Tensor();
        saved = empty({steps, batch, gates * hidden}, dtype, device);
    }
    // The outputs' data, for the backward: not the recorded output, whose grad_fn it is.
    const Tensor stored = outputs.detach();
    // The hidden and cell state the run's i-th call starts from: h0 / c0, or the step before's.
    const auto previous_hidden = [stored, h0, step_at](std::int64_t i) {
        return i == 0 ? h0.device_data() : step_rows(stored, step_at(i - 1));
    };
    const auto previous_cell = [cells, c0, step_at](std::int64_t i) {
        return i == 0 ? c0.device_data() : step_rows(cells, step_at(i - 1));
    };
    {
        const NoGradGuard no_grad;
        for (std::int64_t i = 0; i < steps; ++i) {
            const std::int64_t t = step_at(i);
            const Tensor h = i == 0 ? h0 : outputs.select(0, step_at(i - 1));
            const Tensor hg = linear(h, layer.weight_hh, layer.bias_hh);
            const kael_status status =
                lstm
                    ? plugin->lstm_cell_forward(device.index, abi, batch, hidden,
                                                step_rows(x_gates, t), hg.device_data(),
                                                previous_cell(i), step_rows(outputs, t),
                                                step_rows(cells, t), step_rows(saved, t))
                    : plugin->gru_cell_forward(
                          device.index, abi, batch, hidden, step_rows(x_gates, t), hg.device_data(),
                          h.device_data(), step_rows(outputs, t), step_rows(saved, t));
            if (i > 0) {
                backend->check(status, what);
            } else if (!backend->served(status, what)) {
                return {};  // declined before anything was written: the steps compose
            }
            h_gates[static_cast<std::size_t>(t)] = lstm ? Tensor() : hg;
        }
    }
    const std::int64_t last = step_at(steps - 1);
    std::vector<Tensor> results{outputs, outputs.select(0, last).clone()};
    if (lstm) {
        results.push_back(cells.select(0, last).clone());
    }

    const std::vector<Tensor> all{layer.x_gates, layer.weight_hh, layer.bias_hh, layer.h0,
                                  lstm ? layer.c0 : Tensor()};
    std::vector<Tensor> inputs;
    std::vector<std::size_t> positions;  // of each recorded input in all
    for (std::size_t k = 0; k < kInputs; ++k) {
        if (all[k].defined()) {
            inputs.push_back(all[k]);
            positions.push_back(k);
        }
    }
    const Tensor weight = layer.weight_hh;
    const bool bias = layer.bias_hh.defined();
    const auto first_order = [=](const std::vector<Tensor>& grads) {
        const NoGradGuard no_grad;
        // The gradients of the products: LSTM's x and h gates share theirs; GRU's differ.
        const Tensor grad_x_gates = empty(saved.shape(), dtype, device);
        const Tensor grad_h_gates = lstm ? grad_x_gates : empty(saved.shape(), dtype, device);
        // carried: the gradient reaching the hidden state a step returns, from the step after it
        // through the weight (an LSTM's with its output's gradient added in the same product).
        Tensor carried = grads[1];
        bool carries_output = false;
        Tensor grad_c = lstm && grads[2].defined() ? grads[2].contiguous() : Tensor();
        const Tensor weight_t = weight.transpose(0, 1);
        // Made contiguous once (a sum's gradient arrives expanded), so each step reads a slice.
        const Tensor output_grads = grads[0].defined() ? grads[0].contiguous() : Tensor();
        const auto output_grad = [&](std::int64_t i) {
            return output_grads.defined() ? output_grads.select(0, step_at(i)) : Tensor();
        };
        for (std::int64_t i = steps - 1; i >= 0; --i) {
            const std::int64_t t = step_at(i);
            const void* h = previous_hidden(i);
            const Tensor grad_hidden =
                carries_output ? carried : sum_of(carried, output_grad(i), h0);
            const Tensor grad_state = empty(h0.shape(), dtype, device);
            backend->check(
                lstm ? plugin->lstm_cell_backward(
                           device.index, abi, batch, hidden, step_rows(saved, t), previous_cell(i),
                           step_rows(cells, t), grad_hidden.device_data(),
                           grad_c.defined() ? grad_c.device_data() : nullptr,
                           step_rows(grad_x_gates, t), grad_state.device_data())
                     : plugin->gru_cell_backward(
                           device.index, abi, batch, hidden, step_rows(saved, t),
                           h_gates[static_cast<std::size_t>(t)].device_data(), h,
                           grad_hidden.device_data(), step_rows(grad_x_gates, t),
                           step_rows(grad_h_gates, t), grad_state.device_data()),
                what);
            // One product with the rest added in its epilogue: the earlier step's output
            // gradient (LSTM) or the state's own gradient (GRU).
            const Tensor added = lstm ? (i > 0 ? output_grad(i - 1) : Tensor()) : grad_state;
            carried =
                linear(grad_h_gates.select(0, t), weight_t, Tensor(), Activation::None, added);
            carries_output = lstm;
            if (lstm) {
                grad_c = grad_state;
            }
        }
        const Tensor grad_h = carried;
        // Every step's hidden state before it is h0 for the first step, else another step's
        // output: one product over those, one over h0.
        const std::int64_t first = step_at(0);
        Tensor grad_weight = matmul(grad_h_gates.select(0, first).transpose(0, 1), h0);
        if (steps > 1) {
            const std::int64_t rows = (steps - 1) * batch;
            const Tensor later =
                narrow(grad_h_gates, 0, reverse ? 0 : 1, steps - 1).reshape({rows, gates * hidden});
            const Tensor before =
                narrow(stored, 0, reverse ? 1 : 0, steps - 1).reshape({rows, hidden});
            grad_weight = grad_weight + matmul(later.transpose(0, 1), before);
        }
        const std::vector<Tensor> by_input{
            grad_x_gates, grad_weight,
            bias ? sum(grad_h_gates.reshape({steps * batch, gates * hidden}), 0) : Tensor(), grad_h,
            grad_c};
        std::vector<Tensor> out;
        for (const std::size_t k : positions) {
            out.push_back(by_input[k]);
        }
        return out;
    };
    // composed takes every slot: the recorded inputs back in theirs.
    const ComposedCell by_slot = [positions, composed](const std::vector<Tensor>& given) {
        std::vector<Tensor> slots(kInputs);
        for (std::size_t k = 0; k < positions.size(); ++k) {
            slots[positions[k]] = given[k];
        }
        return composed(slots);
    };
    record_fused(results, inputs, lstm ? "LstmLayerBackward" : "GruLayerBackward", by_slot,
                 first_order);
    return results;
}

}  // namespace kael::nn::detail

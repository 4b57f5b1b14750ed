// RNN, LSTM and GRU layers and cells (nn_rnn.h), composed from the core's ops; the LSTM and GRU
// cells on the plugin's fused cells where it has them (rnn_cell_plugin.cpp), and a whole LSTM or
// GRU layer direction as one node over them (rnn_layer_plugin.cpp).
#include <cmath>

#include "kael/autograd.h"
#include "kael/fast.h"
#include "kael/nn_rnn.h"
#include "nn_internal.h"

namespace kael::nn {

namespace {

std::int64_t gates_of(const std::string& mode) {
    if (mode == "LSTM") {
        return 4;
    }
    if (mode == "GRU") {
        return 3;
    }
    if (mode == "RNN_TANH" || mode == "RNN_RELU") {
        return 1;
    }
    throw ValueError("RNN: mode must be 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU', got '" + mode +
                     "'");
}

// Uniform in +-1/sqrt(hidden), as PyTorch initialises every recurrent weight and bias.
Tensor uniform(const Shape& shape, std::int64_t hidden, const Device& device) {
    const NoGradGuard guard;
    const double bound = 1.0 / std::sqrt(static_cast<double>(hidden));
    return ((rand(shape) * 2.0 - 1.0) * bound).to(device);
}

}  // namespace

namespace functional {

namespace {
// The gates of [*, count * H] along the last dim, as slices (views, which differentiate twice,
// where chunk's split does not).
std::vector<Tensor> gate_slices(const Tensor& gates, std::int64_t count) {
    const std::int64_t last = gates.dim() - 1;
    const std::int64_t width = gates.size(last) / count;
    std::vector<Tensor> slices;
    for (std::int64_t k = 0; k < count; ++k) {
        slices.push_back(gates.slice(last, k * width, (k + 1) * width));
    }
    return slices;
}
}  // namespace

std::vector<Tensor> rnn_cell(const std::string& mode, const Tensor& x_gates, const Tensor& h_gates,
                             const Tensor& h, const Tensor& c) {
    if (mode == "LSTM") {
        const auto composed = [](const std::vector<Tensor>& in) {
            const std::vector<Tensor> g = gate_slices(in[0] + in[1], 4);
            const Tensor cell = sigmoid(g[1]) * in[2] + sigmoid(g[0]) * tanh(g[2]);
            return std::vector<Tensor>{sigmoid(g[3]) * tanh(cell), cell};
        };
        // One launch a step where the plugin has the cell (KAEL_EXTENSION_RECURRENT).
        std::vector<Tensor> served = detail::plugin_lstm_cell(x_gates, h_gates, c, composed);
        return served.empty() ? composed({x_gates, h_gates, c}) : served;
    }
    if (mode == "GRU") {
        const auto composed = [](const std::vector<Tensor>& in) {
            const std::vector<Tensor> x = gate_slices(in[0], 3);
            const std::vector<Tensor> hh = gate_slices(in[1], 3);
            const Tensor reset = sigmoid(x[0] + hh[0]);
            const Tensor update = sigmoid(x[1] + hh[1]);
            const Tensor candidate = tanh(x[2] + reset * hh[2]);
            return std::vector<Tensor>{candidate + update * (in[2] - candidate)};
        };
        const Tensor served = detail::plugin_gru_cell(x_gates, h_gates, h, composed);
        return served.defined() ? std::vector<Tensor>{served} : composed({x_gates, h_gates, h});
    }
    const Tensor sum = x_gates + h_gates;
    return {mode == "RNN_RELU" ? relu(sum) : tanh(sum)};
}

}  // namespace functional

RNNBase::RNNBase(const RNNOptions& given, Device device) : options(given) {
    const std::int64_t gates = gates_of(options.mode);
    detail::require_positive(options.input_size, "RNN", "input_size");
    detail::require_positive(options.hidden_size, "RNN", "hidden_size");
    detail::require_positive(options.num_layers, "RNN", "num_layers");
    if (options.proj_size < 0 || options.proj_size >= options.hidden_size ||
        (options.proj_size > 0 && options.mode != "LSTM")) {
        throw ValueError("RNN: proj_size must be 0, or below hidden_size for an LSTM");
    }
    if (!(options.dropout >= 0 && options.dropout <= 1)) {
        throw ValueError("RNN: dropout must be in [0, 1]");
    }
    const std::int64_t hidden = options.hidden_size;
    const std::int64_t out = options.proj_size > 0 ? options.proj_size : hidden;
    const std::int64_t directions = options.bidirectional ? 2 : 1;
    for (std::int64_t layer = 0; layer < options.num_layers; ++layer) {
        for (std::int64_t direction = 0; direction < directions; ++direction) {
            const std::string suffix =
                "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
            const std::int64_t in = layer == 0 ? options.input_size : out * directions;
            std::vector<Tensor*> slots(5, nullptr);
            slots[0] = &register_parameter("weight_ih" + suffix,
                                           uniform({gates * hidden, in}, hidden, device));
            slots[1] = &register_parameter("weight_hh" + suffix,
                                           uniform({gates * hidden, out}, hidden, device));
            if (options.bias) {
                slots[2] = &register_parameter("bias_ih" + suffix,
                                               uniform({gates * hidden}, hidden, device));
                slots[3] = &register_parameter("bias_hh" + suffix,
                                               uniform({gates * hidden}, hidden, device));
            }
            if (options.proj_size > 0) {
                slots[4] = &register_parameter("weight_hr" + suffix,
                                               uniform({out, hidden}, hidden, device));
            }
            weights_.push_back(slots);
        }
    }
}

namespace {

// One direction of a layer step by step from ops (the cells on the plugin's fused cells where
// it has them): {outputs [T, B, out], last h, last c (LSTM)}. lengths (packed sequences, longest
// first): a sequence's later steps leave its state alone and output zeros.
std::vector<Tensor> run_steps(const std::string& mode, const Tensor& x_gates,
                              const Tensor& weight_hh, const Tensor& bias_hh,
                              const Tensor& weight_hr, const Tensor& h0, const Tensor& c0,
                              bool reverse, const std::vector<std::int64_t>& lengths) {
    const bool lstm = mode == "LSTM";
    const std::int64_t steps = x_gates.size(0);
    const std::int64_t batch = x_gates.size(1);
    const std::int64_t out = h0.size(-1);
    // The sequences still running at step t: the first `running(t)` rows.
    const auto running = [&](std::int64_t t) {
        std::int64_t count = 0;
        while (count < static_cast<std::int64_t>(lengths.size()) &&
               lengths[static_cast<std::size_t>(count)] > t) {
            ++count;
        }
        return lengths.empty() ? batch : count;
    };
    Tensor h = h0;
    Tensor c = c0;
    std::vector<Tensor> outputs(static_cast<std::size_t>(steps));
    for (std::int64_t i = 0; i < steps; ++i) {
        const std::int64_t t = reverse ? steps - 1 - i : i;
        const std::int64_t live = running(t);
        const auto head = [&](const Tensor& v) {
            return live == batch ? v : narrow(v, 0, 0, live);
        };
        std::vector<Tensor> next =
            functional::rnn_cell(mode, head(x_gates.select(0, t)),
                                 linear(head(h), weight_hh, bias_hh), head(h), lstm ? head(c) : c);
        if (weight_hr.defined()) {
            next[0] = linear(next[0], weight_hr);
        }
        if (live == batch) {
            h = next[0];
            c = lstm ? next[1] : c;
            outputs[static_cast<std::size_t>(t)] = h;
            continue;
        }
        // Finished (or, backwards, not yet started) sequences keep their state.
        const auto rest = [&](const Tensor& v) { return narrow(v, 0, live, batch - live); };
        outputs[static_cast<std::size_t>(t)] =
            cat({next[0], zeros({batch - live, out}, x_gates.dtype(), x_gates.device())}, 0);
        h = cat({next[0], rest(h)}, 0);
        if (lstm) {
            c = cat({next[1], rest(c)}, 0);
        }
    }
    std::vector<Tensor> result{
        steps > 0 ? stack(outputs, 0) : zeros({0, batch, out}, x_gates.dtype(), x_gates.device()),
        h};
    if (lstm) {
        result.push_back(c);
    }
    return result;
}

}  // namespace

std::pair<Tensor, std::vector<Tensor>> RNNBase::forward_with_state(
    const Tensor& input, const std::vector<Tensor>& state,
    const std::vector<std::int64_t>& lengths) {
    const bool lstm = options.mode == "LSTM";
    const bool batched = input.dim() == 3;
    if (input.dim() != 2 && input.dim() != 3) {
        throw ValueError(type_name() + ": expected a 2-d or 3-d input, got " +
                         to_string(input.shape()));
    }
    Tensor x = batched ? (options.batch_first ? input.transpose(0, 1) : input)
                       : input.unsqueeze(1);  // [T, B, I]
    if (x.size(2) != options.input_size) {
        throw ValueError(type_name() + ": input size " + std::to_string(x.size(2)) +
                         " is not input_size " + std::to_string(options.input_size));
    }
    const std::int64_t steps = x.size(0);
    const std::int64_t batch = x.size(1);
    const std::int64_t hidden = options.hidden_size;
    const std::int64_t out = options.proj_size > 0 ? options.proj_size : hidden;
    const std::int64_t directions = options.bidirectional ? 2 : 1;
    const std::int64_t stacks = options.num_layers * directions;
    const auto initial = [&](std::size_t index, std::int64_t size) {
        if (index < state.size() && state[index].defined()) {
            const Tensor given = batched ? state[index] : state[index].unsqueeze(1);
            if (given.shape() != Shape{stacks, batch, size}) {
                throw ValueError(type_name() + ": expected hidden state [" +
                                 std::to_string(stacks) + ", " + std::to_string(batch) + ", " +
                                 std::to_string(size) + "], got " +
                                 to_string(state[index].shape()));
            }
            return given;
        }
        return zeros({stacks, batch, size}, x.dtype(), x.device());
    };
    if (!lengths.empty()) {
        bool sorted = static_cast<std::int64_t>(lengths.size()) == batch;
        for (std::size_t i = 0; sorted && i < lengths.size(); ++i) {
            sorted =
                lengths[i] >= 1 && lengths[i] <= steps && (i == 0 || lengths[i] <= lengths[i - 1]);
        }
        if (!sorted) {
            throw ValueError(type_name() + ": lengths must give each of the " +
                             std::to_string(batch) + " sequences 1 to " + std::to_string(steps) +
                             " steps, longest first");
        }
    }
    const Tensor h0 = initial(0, out);
    const Tensor c0 = lstm ? initial(1, hidden) : Tensor();
    std::vector<Tensor> last_h;
    std::vector<Tensor> last_c;
    for (std::int64_t layer = 0; layer < options.num_layers; ++layer) {
        std::vector<Tensor> per_direction;
        for (std::int64_t direction = 0; direction < directions; ++direction) {
            const std::int64_t which = layer * directions + direction;
            const std::vector<Tensor*>& w = weights_[static_cast<std::size_t>(which)];
            const auto weight = [&](std::size_t i) { return w[i] ? *w[i] : Tensor(); };
            // Every step's input-to-hidden product at once.
            const Tensor x_gates =
                linear(x.reshape({steps * batch, x.size(2)}), weight(0), weight(2))
                    .reshape({steps, batch, -1});
            const bool reverse = direction == 1;
            const Tensor h_first = h0.select(0, which);
            const Tensor c_first = lstm ? c0.select(0, which) : Tensor();
            // A layer without packed lengths or a projection: one node on the plugin's cells.
            const std::string mode = options.mode;
            const auto composed = [mode, reverse](const std::vector<Tensor>& in) {
                return run_steps(mode, in[0], in[1], in[2], Tensor(), in[3], in[4], reverse, {});
            };
            std::vector<Tensor> layer_result;
            if (lengths.empty() && w[4] == nullptr && (lstm || options.mode == "GRU")) {
                layer_result = detail::plugin_recurrent_layer(
                    {lstm, x_gates, weight(1), weight(3), h_first, c_first, reverse}, composed);
            }
            if (layer_result.empty()) {
                layer_result = run_steps(options.mode, x_gates, weight(1), weight(3), weight(4),
                                         h_first, c_first, reverse, lengths);
            }
            per_direction.push_back(layer_result[0]);
            last_h.push_back(layer_result[1]);
            if (lstm) {
                last_c.push_back(layer_result[2]);
            }
        }
        x = directions == 1 ? per_direction[0] : cat(per_direction, 2);
        if (options.dropout > 0 && is_training() && layer + 1 < options.num_layers) {
            x = dropout(x, options.dropout, true);
        }
    }
    Tensor output = batched ? (options.batch_first ? x.transpose(0, 1) : x) : x.squeeze(1);
    std::vector<Tensor> final_state{stack(last_h, 0)};
    if (lstm) {
        final_state.push_back(stack(last_c, 0));
    }
    if (!batched) {
        for (Tensor& t : final_state) {
            t = t.squeeze(1);
        }
    }
    return {output, final_state};
}

std::string RNNBase::type_name() const {
    return options.mode == "LSTM" ? "LSTM" : options.mode == "GRU" ? "GRU" : "RNN";
}

std::string RNNBase::extra_repr() const {
    std::string text =
        std::to_string(options.input_size) + ", " + std::to_string(options.hidden_size);
    if (options.proj_size > 0) {
        text += ", proj_size=" + std::to_string(options.proj_size);
    }
    if (options.num_layers != 1) {
        text += ", num_layers=" + std::to_string(options.num_layers);
    }
    if (!options.bias) {  // PyTorch's printout leaves the nonlinearity out
        text += ", bias=False";
    }
    if (options.batch_first) {
        text += ", batch_first=True";
    }
    if (options.dropout != 0) {
        text += ", dropout=" + detail::format_number(options.dropout);
    }
    if (options.bidirectional) {
        text += ", bidirectional=True";
    }
    return text;
}

RNNCellBase::RNNCellBase(const std::string& cell_mode, std::int64_t in, std::int64_t hidden,
                         bool bias, Device device)
    : mode(cell_mode), input_size(in), hidden_size(hidden) {
    const std::int64_t gates = gates_of(mode);
    detail::require_positive(in, "RNNCell", "input_size");
    detail::require_positive(hidden, "RNNCell", "hidden_size");
    register_parameter("weight_ih", weight_ih, uniform({gates * hidden, in}, hidden, device));
    register_parameter("weight_hh", weight_hh, uniform({gates * hidden, hidden}, hidden, device));
    if (bias) {
        register_parameter("bias_ih", bias_ih, uniform({gates * hidden}, hidden, device));
        register_parameter("bias_hh", bias_hh, uniform({gates * hidden}, hidden, device));
    }
}

std::vector<Tensor> RNNCellBase::step(const Tensor& input, const std::vector<Tensor>& state) {
    if (input.dim() != 1 && input.dim() != 2) {
        throw ValueError(type_name() + ": expected a 1-d or 2-d input, got " +
                         to_string(input.shape()));
    }
    const Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input;
    const auto given = [&](std::size_t i) {
        if (i < state.size() && state[i].defined()) {
            return input.dim() == 1 ? state[i].unsqueeze(0) : state[i];
        }
        return zeros({x.size(0), hidden_size}, x.dtype(), x.device());
    };
    const Tensor h = given(0);
    const Tensor c = mode == "LSTM" ? given(1) : Tensor();
    std::vector<Tensor> next = functional::rnn_cell(mode, linear(x, weight_ih, bias_ih),
                                                    linear(h, weight_hh, bias_hh), h, c);
    if (input.dim() == 1) {
        for (Tensor& t : next) {
            t = t.squeeze(0);
        }
    }
    return next;
}

std::string RNNCellBase::type_name() const {
    return mode == "LSTM" ? "LSTMCell" : mode == "GRU" ? "GRUCell" : "RNNCell";
}

std::string RNNCellBase::extra_repr() const {
    std::string text = std::to_string(input_size) + ", " + std::to_string(hidden_size);
    if (!bias_ih.defined()) {
        text += ", bias=False";
    }
    if (mode == "RNN_RELU") {
        text += ", nonlinearity=relu";
    }
    return text;
}

}  // namespace kael::nn

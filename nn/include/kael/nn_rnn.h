#pragma once
// torch.nn's recurrent layers: RNN (tanh or relu), LSTM (with proj_size) and GRU over layers
// and both directions, and their one-step cells. Each layer runs the input-to-hidden product of
// every time step as one matrix product, then a short loop of a hidden-to-hidden product and
// the cell's elementwise ops per step; autograd follows the ops, on every device. Parameter
// names, shapes, initialisation and gate order are PyTorch's (LSTM: i, f, g, o; GRU: r, z, n).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kael/nn.h"
#include "kael/ops.h"

namespace kael::nn {

struct RNNOptions {
    std::string mode = "LSTM";  // "RNN_TANH", "RNN_RELU", "LSTM" or "GRU"
    std::int64_t input_size = 0;
    std::int64_t hidden_size = 0;
    std::int64_t num_layers = 1;
    bool bias = true;
    bool batch_first = false;
    double dropout = 0.0;  // between layers, while training
    bool bidirectional = false;
    std::int64_t proj_size = 0;  // LSTM only: h is projected to this size
};

class RNNBase : public Module {
public:
    RNNBase(const RNNOptions& options, Device device = kCPU);
    // input [T, B, input_size] ([B, T, ...] with batch_first, [T, input_size] unbatched);
    // state: h0 (and c0 for LSTM), [layers * directions, B, size] each, empty for zeros.
    // Returns the last layer's outputs [T, B, directions * out] and the final state.
    // lengths (packed sequences): each batch element's steps, in non-increasing order; a
    // sequence's later steps leave its state alone and output zeros.
    std::pair<Tensor, std::vector<Tensor>> forward_with_state(
        const Tensor& input, const std::vector<Tensor>& state,
        const std::vector<std::int64_t>& lengths = {});
    Tensor forward(const Tensor& input) override { return forward_with_state(input, {}).first; }
    [[nodiscard]] std::string type_name() const override;
    [[nodiscard]] std::string extra_repr() const override;
    RNNOptions options;

private:
    // weight_ih, weight_hh, bias_ih, bias_hh, weight_hr of each layer and direction, in
    // PyTorch's registration order (undefined where absent).
    std::vector<std::vector<Tensor*>> weights_;
};

// One step: h' (and c') from input [B, input_size] (or [input_size]) and the state.
class RNNCellBase : public Module {
public:
    RNNCellBase(const std::string& mode, std::int64_t input_size, std::int64_t hidden_size,
                bool bias = true, Device device = kCPU);
    std::vector<Tensor> step(const Tensor& input, const std::vector<Tensor>& state);
    Tensor forward(const Tensor& input) override { return step(input, {}).front(); }
    [[nodiscard]] std::string type_name() const override;
    [[nodiscard]] std::string extra_repr() const override;
    std::string mode;
    std::int64_t input_size;
    std::int64_t hidden_size;
    Tensor weight_ih, weight_hh, bias_ih, bias_hh;
};

namespace functional {
// One cell step of mode over gates already multiplied: x_gates = x W_ih^T + b_ih and
// h_gates = h W_hh^T + b_hh ([B, gates * hidden]); returns h' (and c' for LSTM).
[[nodiscard]] std::vector<Tensor> rnn_cell(const std::string& mode, const Tensor& x_gates,
                                           const Tensor& h_gates, const Tensor& h, const Tensor& c);
}  // namespace functional

}  // namespace kael::nn

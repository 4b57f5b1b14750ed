#pragma once
// Checks and helpers shared by the nn sources (not installed).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "kael/nn.h"

struct kael_recurrent;  // plugin_extensions.h

namespace kael::nn::detail {

// ValueError "<who>: <field> must be positive, got <value>" unless value > 0.
void require_positive(std::int64_t value, const char* who, const char* field);
// ValueError unless 0 <= p < 1 (the range the dropout op accepts).
void require_probability(double p, const char* who, const char* field);

// sizes with one entry per spatial dim (a single number repeats); ValueError naming op and
// field for any other count.
[[nodiscard]] Shape per_spatial_dim(const Shape& sizes, std::int64_t spatial, const char* op,
                                    const char* field);

// A convolution's operands (input batched, unpadded) and sizes per spatial dim: zero padding
// before and after each dim (uneven for padding="same").
struct ConvCall {
    Tensor input, weight, bias;
    Shape stride, before, after, dilation;
    std::int64_t groups;
    const char* op;  // "conv2d", for messages
};
// A fused op's composed form over its inputs (double backward differentiates it).
using ComposedCell = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
// The gradients of inputs for grads (undefined: none) through composed(inputs), recorded so
// they differentiate again (a fused op's double backward through its composed form); undefined
// for inputs that need none (functional_conv_plugin.cpp).
[[nodiscard]] std::vector<Tensor> differentiable_gradients(const ComposedCell& composed,
                                                           const std::vector<Tensor>& grads,
                                                           const std::vector<Tensor>& inputs);
// The extension table name of the plugin serving device, or nullptr where it has none or its
// struct_size is below least_size (functional_conv_plugin.cpp).
[[nodiscard]] const void* plugin_extension(const Device& device, const char* name,
                                           std::size_t least_size);
// The device plugin's convolution (KAEL_EXTENSION_CONVOLUTION) recorded for autograd, or an
// undefined tensor where the plugin has none or declines the call (functional_conv_plugin.cpp).
[[nodiscard]] Tensor plugin_conv(const ConvCall& call);
// The LSTM and GRU cells on the device plugin's KAEL_EXTENSION_RECURRENT, recorded for
// autograd: {hidden, cell} (LSTM) or the hidden state (GRU) of the next step, or empty where the
// plugin has none or declines (rnn_cell_plugin.cpp). composed is the cell from ops over
// {x_gates, h_gates, state}, which double backward differentiates.
[[nodiscard]] std::vector<Tensor> plugin_lstm_cell(const Tensor& x_gates, const Tensor& h_gates,
                                                   const Tensor& cell,
                                                   const ComposedCell& composed);
[[nodiscard]] Tensor plugin_gru_cell(const Tensor& x_gates, const Tensor& h_gates,
                                     const Tensor& state, const ComposedCell& composed);
// Records a fused op's outputs over inputs: first_order runs the plugin's backward for the
// outputs' gradients (undefined where none came); with create_graph composed is differentiated
// instead, so the gradient differentiates again (rnn_cell_plugin.cpp).
void record_fused(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                  const char* name, const ComposedCell& composed, const ComposedCell& first_order);
// The device plugin's KAEL_EXTENSION_RECURRENT table, or nullptr (rnn_cell_plugin.cpp).
[[nodiscard]] const kael_recurrent* recurrent_of(const Device& device);
// One direction of an LSTM (lstm) or GRU layer: x_gates [T, B, gates * H] (the inputs'
// products with bias_ih), weight_hh [gates * H, H], bias_hh (or undefined), h0 and c0 (LSTM)
// [B, H], all of one device and float dtype; reverse runs from the last step.
struct RecurrentLayer {
    bool lstm;
    Tensor x_gates, weight_hh, bias_hh, h0, c0;
    bool reverse;
};
// {outputs [T, B, H], last hidden state, last cell state (LSTM)} on the plugin's fused cells,
// recorded for autograd as one node, or empty where the plugin has none or declines
// (rnn_layer_plugin.cpp). composed runs the same layer from ops over {x_gates, weight_hh,
// bias_hh, h0, c0} (undefined where absent), which double backward differentiates.
[[nodiscard]] std::vector<Tensor> plugin_recurrent_layer(const RecurrentLayer& layer,
                                                         const ComposedCell& composed);
// BatchNorm's training step on the device plugin's per-channel kernels
// (KAEL_EXTENSION_CHANNELS), running statistics updated and the result recorded for autograd
// over {input, weight, bias} (those defined), or an undefined tensor where the plugin has none
// or declines (channel_norms_plugin.cpp). composed is the normalisation from ops over those
// inputs, which double backward differentiates.
using ComposedNorm = std::function<Tensor(const std::vector<Tensor>&)>;
[[nodiscard]] Tensor plugin_batch_norm(const Tensor& input, const Tensor& running_mean,
                                       const Tensor& running_var, const Tensor& weight,
                                       const Tensor& bias, double momentum, double eps,
                                       const ComposedNorm& composed);
// GroupNorm on the same kernels (channel_norms_plugin.cpp), recorded for autograd over
// {input, weight, bias} (those defined), or undefined where the plugin has none or declines.
[[nodiscard]] Tensor plugin_group_norm(const Tensor& input, std::int64_t groups,
                                       const Tensor& weight, const Tensor& bias, double eps,
                                       const ComposedNorm& composed);
// input * scale[c] + shift[c] over the channels (dim 1) on the plugin's per-channel kernels,
// recorded for autograd over {input, scale, shift} (those defined; at least one), or an
// undefined tensor where the plugin has none or declines (channel_norms_plugin.cpp).
[[nodiscard]] Tensor plugin_channel_affine(const Tensor& input, const Tensor& scale,
                                           const Tensor& shift);
// The convolution composed from sliding windows and a matrix product on call's device, the
// path without a plugin convolution and the plugin path's double backward.
[[nodiscard]] Tensor composed_conv(const ConvCall& call);

// sliding_windows' adjoint for windows [N, *O, C, *K] into a zero [N, C, *S], through strided
// in-place adds (not recorded; functional_conv.cpp).
[[nodiscard]] Tensor windows_folded(const Tensor& windows, const Shape& shape, const Shape& kernel,
                                    const Shape& stride, const Shape& dilation);

// A pooling's geometry: sizes per dim and the padding (before, after pairs from the last dim
// backwards, as pad()) whose after part grows where ceil_mode adds a last, partial window.
struct PoolGeometry {
    Shape kernel, stride, padding, dilation, out;
    Shape regular_pairs;  // padding on both sides
    Shape extra_pairs;    // (0, extra) where ceil_mode reaches past the padding
};
// The gradient of the input x for grad through a function of x recomputed with autograd (the
// composed form of an op whose fast backward cannot be differentiated again).
using Recompute = std::function<Tensor(const Tensor&)>;
// Max and average pooling of a batched [N, C, *S] x over strided views of its padded copy, one
// kernel offset at a time (functional_pool_slices.cpp): (values, flat input positions) and the
// average; divisor: counts of cells per window [1, 1, *O], or a number when defined.
[[nodiscard]] std::pair<Tensor, Tensor> sliced_max_pool(const Tensor& x, const PoolGeometry& g,
                                                        const Recompute& composed);
[[nodiscard]] Tensor sliced_avg_pool(const Tensor& x, const PoolGeometry& g, const Tensor& divisor,
                                     const Recompute& composed);
// The device plugin's pooling (KAEL_EXTENSION_POOLING; kind a KAEL_POOL_*) recorded for
// autograd, or an undefined tensor where it has none or declines (functional_pool_plugin.cpp).
[[nodiscard]] Tensor plugin_pool(const Tensor& x, const PoolGeometry& g, std::int32_t kind,
                                 const Recompute& composed);

// value as a user would write it ("0.5", "-1", "nan"), unlike std::to_string's "0.500000".
[[nodiscard]] std::string format_number(double value);

// name with every byte outside printable ASCII written as \xNN, so a corrupt name still
// gives a readable message (and valid UTF-8 for Python).
[[nodiscard]] std::string printable_name(const std::string& name);

// GPT's KV cache layout: keys and values [B, H, T, D] over one joint buffer of [B, room, 2C]
// rows (strides (room * 2C, D, 2C, 1), values C past keys). Returns room, or 0 when keys and
// values (either may be undefined) are laid out otherwise.
[[nodiscard]] std::int64_t joint_room(const Tensor& keys, const Tensor& values);

// Module::load_state_dict with the op named in messages ("load_state_dict", "load '<path>'").
IncompatibleKeys apply_state(Module& module,
                             const std::vector<std::pair<std::string, Tensor>>& state, bool strict,
                             const std::string& op);

}  // namespace kael::nn::detail

#pragma once
// The core's only way to touch tensor data: plugin kernels, with the host fallback through the
// cpu plugin when the device's plugin leaves a slot empty.
#include <optional>
#include <span>
#include <vector>

#include "kael/plugin_api.h"
#include "kael/tensor.h"

namespace kael::detail {

inline kael_dtype abi(DType dtype) { return static_cast<kael_dtype>(dtype); }
kael_element_params no_params();
kael_element_params real_params(double first, double second = 0);
kael_element_params integer_params(std::int64_t first, std::int64_t second = 0);

// Throws "expected all tensors to be on the same device, but found cpu and cuda".
void check_same_device(std::span<const Tensor> tensors, const char* op);
inline void check_same_device(const std::vector<Tensor>& tensors, const char* op) {
    check_same_device(std::span<const Tensor>(tensors), op);
}
// Copies bytes between blocks on any two devices.
void transfer(void* target, const Device& target_device, const void* source,
              const Device& source_device, std::int64_t bytes);

void fill(const Tensor& contiguous_out, const kael_element_params& value);
void convert(const Tensor& out, const Tensor& input);  // input broadcast to out's shape
// inputs as a span: the elementwise front-end passes an array, not a vector (host overhead).
void elementwise(kael_element_op op, const Tensor& out, std::span<const Tensor> inputs,
                 DType in_dtype, const kael_element_params& params);
inline void elementwise(kael_element_op op, const Tensor& out, const std::vector<Tensor>& inputs,
                        DType in_dtype, const kael_element_params& params) {
    elementwise(op, out, std::span<const Tensor>(inputs), in_dtype, params);
}
void reduce(kael_reduce_op op, const Tensor& out, const Tensor& contiguous_in,
            std::int64_t chunk_size, std::int64_t rows);
// The dtype_flags a plugin needs to take reduce or reduce_dims as stored: a bf16/f16 last pass
// over f32 partials (out low precision, in f32) needs KAEL_DTYPE_FLAG_LOW_PRECISION_LAST_PASS too.
std::uint32_t reduce_low_precision_flags(const Tensor& out, const Tensor& in);
// Whether t's plugin has the reduce_indexed slot; reduce_indexed() runs it: values
// (a's dtype) and int64 indices of the max (op ARGMAX) or min (ARGMIN) along i.
bool has_reduce_indexed(const Tensor& t);
void reduce_indexed(kael_reduce_op op, const Tensor& values, const Tensor& indices,
                    const Tensor& block, std::int64_t outer, std::int64_t size,
                    std::int64_t inner);
// out (outer x inner, contiguous) = op along i of block, a contiguous outer x size x inner run
// of elements (a 1-d view of them). Plugins without the slot reduce rows after a device copy.
void reduce_dims(kael_reduce_op op, const Tensor& out, const Tensor& block, std::int64_t outer,
                 std::int64_t size, std::int64_t inner);
// Whether t's plugin takes reduce op `op` in reduce_dims (its ABI minor has the op).
bool serves_reduce_op(const Tensor& t, kael_reduce_op op);
// Whether t's plugin has the reduce_dims_finished slot; reduce_dims_finished() runs
// it: reduce_dims() whose results r are stored as r * scale, or sqrt of that, in block's dtype.
bool has_reduce_dims_finished(const Tensor& t);
void reduce_dims_finished(kael_reduce_op op, const Tensor& out, const Tensor& block,
                          std::int64_t outer, std::int64_t size, std::int64_t inner, double scale,
                          bool root);
void matmul(const Tensor& out, const Tensor& a, const Tensor& b, const kael_matmul_sizes& sizes);
// matmul plus bias (sizes.columns elements) added to every row, in one kernel where the plugin
// has matmul_bias; otherwise its matmul and an add, on the device.
// act(a x b + bias) + residual (bias, residual may be undefined; residual contiguous as out) in
// one call when the plugin has matmul_epilogue; otherwise matmul_bias, then the
// activation and the add, on the device.
void matmul_epilogue(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                     const Tensor& residual, const kael_matmul_sizes& sizes,
                     std::int32_t activation);
void matmul_bias(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& bias,
                 const kael_matmul_sizes& sizes);
void gather(const Tensor& out, const Tensor& data, const Tensor& index,
            const kael_index_layout& layout);
void scatter_add(const Tensor& data, const Tensor& index, const Tensor& source,
                 const kael_index_layout& layout);
// IndexError (named by op and what) unless every index lies in [low, high): through the plugin's
// check_indices, which may report it at the device's next synchronising call, or on the host.
void check_indices(const Tensor& index, std::int64_t low, std::int64_t high, std::int64_t axis,
                   const char* op, const char* what);
// Rows of chunk_size contiguous elements: sorted values (input dtype) and int64 positions.
void sort(const Tensor& values, const Tensor& indices, const Tensor& contiguous_in,
          std::int64_t chunk_size, std::int64_t rows, bool descending);
// The first k of each row in sort's order (descending when largest): rows of k values and
// int64 positions.
void topk(const Tensor& values, const Tensor& indices, const Tensor& contiguous_in,
          std::int64_t chunk_size, std::int64_t rows, std::int64_t k, bool largest);
// Inclusive prefix sums of rows of chunk_size contiguous elements.
// Whether t's plugin has the scan slot; scan() runs it (on the cpu plugin through
// copies where it is missing), op KAEL_REDUCE_SUM or KAEL_REDUCE_PROD along i of the contiguous
// outer x size x inner input into out.
bool has_scan(const Tensor& t);
void scan(kael_reduce_op op, const Tensor& out, const Tensor& contiguous_in, std::int64_t outer,
          std::int64_t size, std::int64_t inner);
// a scanned along dim d by scan(): a new contiguous tensor of a's shape, floats in their dtype,
// integers and bool as i64 (cumsum's and cumprod's rule).
Tensor scanned(kael_reduce_op op, const Tensor& a, std::int64_t d);
void cumsum(const Tensor& out, const Tensor& contiguous_in, std::int64_t chunk_size,
            std::int64_t rows);
// Fused attention over [B, H, T, D] tensors whose last dimension is contiguous, each read and
// written through its own strides; lse is [B, H, Tq] contiguous. The backward's grad_q/k/v have
// the strides of q/k/v and grad_out those of out. key_lengths (i64 [B], defined or not) makes k
// and v a cache filled to those counts (plugins without it are served by the cpu plugin).
void attention(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k,
               const Tensor& v, double scale, bool causal, const Tensor& key_lengths = Tensor());
// cached_attention after its checks (the caller vouches for key_lengths being in range).
[[nodiscard]] Tensor cached_attention_unchecked(const Tensor& query, const Tensor& key,
                                                const Tensor& value, const Tensor& key_lengths,
                                                bool causal, std::optional<double> scale);
// cached_attention_unchecked after storing new_keys and new_values ([B, H, Tq, D], the
// queries' own) into key and value at each batch's last Tq filled slots, as one call of the
// device's KAEL_EXTENSION_DECODING kernel; nullopt, with nothing written, where the plugin has
// none or declines (the caller then stores them and attends itself).
[[nodiscard]] std::optional<Tensor> cached_attention_appending(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& new_keys,
    const Tensor& new_values, const Tensor& key_lengths, bool causal, std::optional<double> scale);
// The sizes of x [rows, inner] times weight [columns, inner] transposed, one batch
// (weight_transposed: weight is a transposed view of an [inner, columns] matrix).
[[nodiscard]] kael_matmul_sizes linear_sizes(std::int64_t rows, std::int64_t inner,
                                             std::int64_t columns, bool a_transposed,
                                             bool weight_transposed);
// The attention slot's layout of q, k, v and out (key_lengths left null).
[[nodiscard]] kael_attention_layout attention_layout(const Tensor& q, const Tensor& k,
                                                     const Tensor& v, const Tensor& out,
                                                     double scale, bool causal);
// The device plugin's KAEL_EXTENSION_DECODING kernels, or null.
[[nodiscard]] const kael_decoding* decoding_kernels(const Device& device);
void attention_backward(const Tensor& grad_q, const Tensor& grad_k, const Tensor& grad_v,
                        const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& out, const Tensor& lse, double scale, bool causal);

// layer_norm of rows of columns contiguous elements: out, and mean and rstd (rows elements).
// weight and bias may be undefined.
void layer_norm(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                const Tensor& weight, const Tensor& bias, std::int64_t rows, std::int64_t columns,
                double eps);
// Its gradients; an undefined grad_x, grad_weight or grad_bias is not computed, an undefined
// weight is ones.
void layer_norm_backward(const Tensor& grad_x, const Tensor& grad_weight, const Tensor& grad_bias,
                         const Tensor& grad_out, const Tensor& x, const Tensor& mean,
                         const Tensor& rstd, const Tensor& weight, std::int64_t rows,
                         std::int64_t columns);
// Fused softmax family over contiguous outer x size x inner buffers (along size), and
// cross_entropy over contiguous rows x classes logits; see the slots in plugin_api.h.
void softmax(const Tensor& out, const Tensor& contiguous_in, std::int64_t outer,
             std::int64_t size, std::int64_t inner, bool log);
void softmax_backward(const Tensor& grad_in, const Tensor& grad_out, const Tensor& out,
                      std::int64_t outer, std::int64_t size, std::int64_t inner, bool log);
void cross_entropy(const Tensor& losses, const Tensor& lse, const Tensor& logits,
                   const Tensor& targets);
// grad_losses holds one value per row (grad_stride 1) or one for every row (0).
void cross_entropy_backward(const Tensor& grad_logits, const Tensor& grad_losses,
                            const Tensor& logits, const Tensor& lse, const Tensor& targets);
// One fused Adam step in place on contiguous param, m and v (same dtype and size) from grad.
// factors, when defined, is 3 contiguous f64 on param's device (lr and both corrections, read
// when the kernel runs: recordable); params' own are used otherwise.
void adam(const Tensor& param, const Tensor& m, const Tensor& v, const Tensor& grad,
          const kael_adam_params& params, const Tensor& factors = {});
// Whether device's plugin reads kael_adam_params::device_factors (ABI 1.15): adam() with
// factors needs it, or composes the step.
[[nodiscard]] bool reads_adam_factors(const Device& device);
// One entry of adam_many: what one adam() call takes.
struct AdamTensors {
    Tensor param;
    Tensor m;
    Tensor v;
    Tensor grad;
    kael_adam_params params;
    Tensor factors;  // as adam()'s
};
// adam() on every entry: one adam_many call per device and dtype where the plugin has the slot
// (its small tensors then share launches), else adam() entry by entry.
void adam_many(const std::vector<AdamTensors>& entries);

// The dtype of the per-row statistics a fused kernel saves for its backward (layer_norm's mean
// and rstd, attention's lse): f32 for bf16/f16 data, whose 8 or 11 bits would put the backward's
// exp(s - lse) a few percent off (PyTorch keeps them in f32 too); the data's dtype otherwise.
inline DType stats_dtype(DType dtype) { return is_low_precision(dtype) ? DType::F32 : dtype; }

}  // namespace kael::detail

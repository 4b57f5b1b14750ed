#pragma once
// The neural-network functions that run as one fused kernel where the device has it (softmax,
// cross-entropy, layer norm, embedding, linear with its epilogue, attention), composed from the
// other ops otherwise. Names and semantics are PyTorch's.
#include <cstdint>
#include <optional>

#include "kael/tensor.h"

namespace kael {

// Neural-network functions. Integer inputs of softmax/log_softmax compute in f32.
[[nodiscard]] Tensor softmax(const Tensor& a, std::int64_t dim);
[[nodiscard]] Tensor log_softmax(const Tensor& a, std::int64_t dim);

enum class Reduction { None, Mean, Sum };
// logits [N, C] floating, targets i64 [N] in [0, C): -log_softmax(logits)[n, targets[n]],
// reduced. IndexError for a target out of range.
[[nodiscard]] Tensor cross_entropy(const Tensor& logits, const Tensor& targets,
                                   Reduction reduction = Reduction::Mean);
// Normalizes over the last dimension (size D); weight and bias, when defined, have shape [D].
[[nodiscard]] Tensor layer_norm(const Tensor& x, const Tensor& weight = Tensor(),
                                const Tensor& bias = Tensor(), double eps = 1e-5);
// Rows of weight [V, D] picked by i64 indices of any shape: result shape indices.shape + [D].
[[nodiscard]] Tensor embedding(const Tensor& weight, const Tensor& indices);
// Zeroes each element with probability p and scales the rest by 1 / (1 - p); the mask comes
// from the seeded generator. p == 0 or !training returns x itself. ValueError unless 0 <= p < 1.
[[nodiscard]] Tensor dropout(const Tensor& x, double p, bool training = true);
// x [..., in] x weight [out, in]^T + bias [out] (when defined).
[[nodiscard]] Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias = Tensor());
enum class Activation { None, GeluTanh };
// act(linear(x, weight, bias)) + residual (undefined: none; broadcast as + does), as one
// kernel where the device fuses the epilogue into the product (inference: a decoding step's
// layers). While autograd records, it is those composed ops, with their gradients.
[[nodiscard]] Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
                            Activation activation, const Tensor& residual = Tensor());
// linear(layer_norm(x, norm_weight, norm_bias, eps), weight, bias, activation, residual), as
// one kernel where the device fuses the norm into the product (inference: a decoding step's
// rows); composed otherwise, and while autograd records, with the composed ops' gradients.
[[nodiscard]] Tensor layer_norm_linear(const Tensor& x, const Tensor& norm_weight,
                                       const Tensor& norm_bias, double eps, const Tensor& weight,
                                       const Tensor& bias, Activation activation = Activation::None,
                                       const Tensor& residual = Tensor());
// softmax(query key^T * scale) value per batch and head, as one fused kernel each way (the
// scores are never stored). query [B, H, Tq, D], key and value [B, H, Tk, D], one floating
// dtype; views are read in place when the last dim is contiguous. causal: query i sees keys
// j <= i + Tk - Tq (aligned at the end, as with a KV cache; a query that sees no key gives
// NaN). scale defaults to 1 / sqrt(D). The result is [B, H, Tq, D] over [B, Tq, H, D] memory,
// so transpose(1, 2).reshape({B, Tq, H * D}) is a view.
[[nodiscard]] Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                                  const Tensor& value, bool causal = false,
                                                  std::optional<double> scale = std::nullopt);
// Attention over KV caches of fixed capacity (flash-attention's with-KV-cache kernel, for
// decoding): key and value [B, H, Tk, D] hold key_lengths[b] filled slots for batch b (i64 [B],
// on their device, so a recorded decoding step serves every position); slots past them are
// never read. causal aligns the last query with the last filled key. Forward only: ValueError
// when an input requires grad under grad mode. Counts outside [0, Tk] are an IndexError (on a
// GPU, at the next synchronising call).
[[nodiscard]] Tensor cached_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                      const Tensor& key_lengths, bool causal = true,
                                      std::optional<double> scale = std::nullopt);
// cached_attention after storing new_keys and new_values ([B, H, Tq, D], the queries' own) into
// key and value at batch b's slots key_lengths[b] - Tq .. key_lengths[b] - 1, as
// flash-attention's kvcache call appends its k and v: one kernel where the device fuses it,
// else the stores and then cached_attention. key and value are written; each key_lengths[b]
// must lie in [Tq, Tk] (IndexError otherwise, on a GPU at the next synchronising call).
[[nodiscard]] Tensor cached_attention_appending(const Tensor& query, const Tensor& key,
                                                const Tensor& value, const Tensor& new_keys,
                                                const Tensor& new_values, const Tensor& key_lengths,
                                                bool causal = true,
                                                std::optional<double> scale = std::nullopt);

}  // namespace kael

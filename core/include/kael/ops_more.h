#pragma once
// Operations built on the ones in ops.h (composed, so they run on every device), plus joins and
// the sequence family (sort, topk, cumsum) backed by their own plugin kernels.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "kael/ops.h"
#include "kael/random.h"

namespace kael {

// Reductions; dim may be negative; no dim reduces over every element.
// var/stddev divide by max(n - correction, 0) (NaN for too few elements); floating only.
[[nodiscard]] Tensor var(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                         std::int64_t correction = 1, bool keepdim = false);
[[nodiscard]] Tensor stddev(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                            std::int64_t correction = 1, bool keepdim = false);
// Euclidean norm of all elements; floating only.
[[nodiscard]] Tensor norm(const Tensor& a);
// Truth of every / any element (non-zero is true); bool result; empty: all true, any false.
[[nodiscard]] Tensor all(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                         bool keepdim = false);
[[nodiscard]] Tensor any(const Tensor& a, std::optional<std::int64_t> dim = std::nullopt,
                         bool keepdim = false);
// log(sum(exp(a), dim)) without overflow; integers compute in f32; an empty dim gives -inf.
[[nodiscard]] Tensor logsumexp(const Tensor& a, std::int64_t dim, bool keepdim = false);
// Over several dims (an empty list: every dim), as torch.logsumexp with a tuple.
[[nodiscard]] Tensor logsumexp(const Tensor& a, const Shape& dims, bool keepdim = false);

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

// Joins. Every tensor has the same rank and the same sizes outside dim (cat; 1-d empty tensors
// are skipped as in torch) or the same shape (stack); the result has the promoted dtype.
[[nodiscard]] Tensor cat(const std::vector<Tensor>& tensors, std::int64_t dim = 0);
[[nodiscard]] Tensor stack(const std::vector<Tensor>& tensors, std::int64_t dim = 0);

// A 0-d tensor of value (dtype, on device), shared: each thread keeps its last few, since the
// same numbers recur in every step of a model (`tensor op number`), and a fresh one costs an
// allocation and a fill (a kernel on a GPU). For operands only (as the Python operators pass
// numbers): never write to it.
[[nodiscard]] Tensor cached_scalar(double value, DType dtype, const Device& device);
// Consecutive views along dim: of the given sizes (which add up to its size), of split_size
// each (the last may be shorter), or `chunks` pieces of ceil(size / chunks). One autograd node
// records them all; its backward writes no copy when their gradients tile one buffer.
[[nodiscard]] std::vector<Tensor> split(const Tensor& input,
                                        const std::vector<std::int64_t>& sizes,
                                        std::int64_t dim = 0);
[[nodiscard]] std::vector<Tensor> split(const Tensor& input, std::int64_t split_size,
                                        std::int64_t dim = 0);
[[nodiscard]] std::vector<Tensor> chunk(const Tensor& input, std::int64_t chunks,
                                        std::int64_t dim = 0);

// Sequence family over one dimension. sort is stable and puts NaN after every number (first
// when descending); returns (values, i64 indices into dim).
[[nodiscard]] std::pair<Tensor, Tensor> sort(const Tensor& a, std::int64_t dim = -1,
                                             bool descending = false);
[[nodiscard]] Tensor argsort(const Tensor& a, std::int64_t dim = -1, bool descending = false);
// The k largest (or smallest) along dim, in sorted order; values are gathered from a.
[[nodiscard]] std::pair<Tensor, Tensor> topk(const Tensor& a, std::int64_t k,
                                             std::int64_t dim = -1, bool largest = true);
// Inclusive prefix sums along dim; floats keep their dtype (double accumulation), integers
// and bool give i64.
[[nodiscard]] Tensor cumsum(const Tensor& a, std::int64_t dim);

}  // namespace kael

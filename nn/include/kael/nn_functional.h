#pragma once
// torch.nn.functional's losses and layer functions with PyTorch's options, composed from the ops
// in ops.h (so they run and differentiate on every device); the fused kernels are used where
// the options allow (cross_entropy with defaults, attention without masks).
#include <cstdint>
#include <optional>
#include <string>

#include "kael/ops.h"

namespace kael::nn::functional {

// "none", "mean" or "sum"; ValueError naming op otherwise.
[[nodiscard]] Reduction parse_reduction(const std::string& reduction, const char* op);

struct CrossEntropyOptions {
    Tensor weight;  // [C], a rescaling weight per class (undefined: all 1)
    std::int64_t ignore_index = -100;  // targets equal to it add nothing, nor count in the mean
    Reduction reduction = Reduction::Mean;
    double label_smoothing = 0.0;  // in [0, 1]: targets mix with the uniform distribution
};

// input [N, C] or [N, C, d1, ...] (or [C]) logits; target i64 class indices [N, d1, ...], or
// class probabilities of input's shape. The mean divides by the summed weights of the counted
// targets (NaN when every target is ignored), or by N * d1 * ... for probability targets.
[[nodiscard]] Tensor cross_entropy(const Tensor& input, const Tensor& target,
                                   const CrossEntropyOptions& options = {});
// input log-probabilities of the same shapes; index targets only; label_smoothing unused.
[[nodiscard]] Tensor nll_loss(const Tensor& input, const Tensor& target,
                              const CrossEntropyOptions& options = {});

// Elementwise losses; target broadcasts against input. Reduction::Mean divides by the count.
[[nodiscard]] Tensor mse_loss(const Tensor& input, const Tensor& target,
                              Reduction reduction = Reduction::Mean);
[[nodiscard]] Tensor l1_loss(const Tensor& input, const Tensor& target,
                             Reduction reduction = Reduction::Mean);
// input probabilities in [0, 1]; the logs are clamped at -100 as PyTorch does, so 0 and 1 give
// finite losses. weight (undefined: none) broadcasts against input.
[[nodiscard]] Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                                          const Tensor& weight = Tensor(),
                                          Reduction reduction = Reduction::Mean);
// input logits, computed stably (no exp of a positive number); pos_weight [C] scales the
// positive term per class (broadcast over the last dim).
[[nodiscard]] Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                                      const Tensor& weight = Tensor(),
                                                      const Tensor& pos_weight = Tensor(),
                                                      Reduction reduction = Reduction::Mean);

// input * sigmoid(input).
[[nodiscard]] Tensor silu(const Tensor& input);
// Normalizes over the last normalized_shape.size() dims; weight and bias have that shape.
[[nodiscard]] Tensor layer_norm(const Tensor& input, const Shape& normalized_shape,
                                const Tensor& weight = Tensor(), const Tensor& bias = Tensor(),
                                double eps = 1e-5);
// Rows of weight for i64 indices of any shape; rows at padding_idx get no gradient.
[[nodiscard]] Tensor embedding(const Tensor& input, const Tensor& weight,
                               std::optional<std::int64_t> padding_idx = std::nullopt);
// i64 [*input.shape, num_classes] of zeros with a one at each index; num_classes < 0: max + 1.
[[nodiscard]] Tensor one_hot(const Tensor& input, std::int64_t num_classes = -1);
// Constant padding: pad holds (before, after) pairs from the last dim backwards, as PyTorch's;
// negative amounts crop. Differentiable.
[[nodiscard]] Tensor pad(const Tensor& input, const Shape& pad, double value = 0.0);

// softmax(q k^T * scale + mask) v for [..., L, E] queries and [..., S, E] keys and values.
// attn_mask broadcasts to [..., L, S]: bool true = take part (PyTorch's convention), float is
// added. is_causal: query i sees keys j <= i. dropout_p drops attention weights. Without mask
// and dropout, 4-d inputs (and causal ones with L == S) run the fused kernel.
[[nodiscard]] Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key,
                                                  const Tensor& value, const Tensor& attn_mask,
                                                  double dropout_p = 0.0, bool is_causal = false,
                                                  std::optional<double> scale = std::nullopt);
// Its composed form, also returning the weights softmax(...) after dropout: what
// MultiheadAttention returns. additive_mask (undefined: none) is added to the scores.
[[nodiscard]] std::pair<Tensor, Tensor> attention_with_weights(
    const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& additive_mask,
    double dropout_p, bool is_causal, std::optional<double> scale);

}  // namespace kael::nn::functional

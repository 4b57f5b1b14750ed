// The layer functions of kael/nn_functional.h with PyTorch's arguments, over the fused ops where
// those arguments allow.
#include <cmath>

#include "kael/autograd.h"
#include "kael/nn_functional.h"
#include "kael/ops.h"
#include "nn_internal.h"

namespace kael::nn::functional {

// The fused silu row and its fused backward.
Tensor silu(const Tensor& input) { return kael::silu(input); }

Tensor layer_norm(const Tensor& input, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
    const auto count = static_cast<std::int64_t>(normalized_shape.size());
    const Shape& shape = input.shape();
    if (count == 0 || count > input.dim() ||
        !std::equal(normalized_shape.begin(), normalized_shape.end(), shape.end() - count)) {
        throw ValueError("layer_norm: normalized_shape " + to_string(normalized_shape) +
                         " must be the last dims of input of shape " + to_string(shape));
    }
    for (const Tensor& affine : {weight, bias}) {
        if (affine.defined() && affine.shape() != normalized_shape) {
            throw ValueError("layer_norm: weight and bias must have shape " +
                             to_string(normalized_shape) + ", got " + to_string(affine.shape()));
        }
    }
    if (count == 1) {
        return kael::layer_norm(input, weight, bias, eps);
    }
    // The fused kernel normalizes the last dim: the normalized dims become one.
    const Tensor rows = flatten(input, input.dim() - count, -1);
    const auto flat = [](const Tensor& t) { return t.defined() ? t.reshape({-1}) : t; };
    return kael::layer_norm(rows, flat(weight), flat(bias), eps).reshape(shape);
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<std::int64_t> padding_idx) {
    Tensor rows = kael::embedding(weight, input);
    if (!padding_idx) {
        return rows;
    }
    std::int64_t padding = *padding_idx;
    const std::int64_t count = weight.dim() > 0 ? weight.size(0) : 0;
    if (padding < -count || padding >= count) {
        throw IndexError("embedding: padding_idx " + std::to_string(padding) +
                         " is outside the " + std::to_string(count) + " rows of weight");
    }
    padding = padding < 0 ? padding + count : padding;
    if (!is_grad_enabled() || !weight.requires_grad()) {
        return rows;
    }
    // Same values; the padding rows' copies come from a detached weight, so add no gradient.
    const Tensor kept = ne(input, cached_scalar(static_cast<double>(padding), DType::I64,
                                                 input.device()))
                            .unsqueeze(-1);
    return where(kept, rows, rows.detach());
}

Tensor one_hot(const Tensor& input, std::int64_t num_classes) {
    if (input.dtype() != DType::I64) {
        throw TypeError("one_hot: input must be int64 class indices, got " +
                        to_string(input.dtype()));
    }
    if (num_classes < 0) {
        if (input.numel() == 0) {
            throw ValueError("one_hot: cannot infer num_classes from an empty tensor");
        }
        num_classes = max(input).item<std::int64_t>() + 1;
    }
    if (input.numel() > 0 &&
        (min(input).item<std::int64_t>() < 0 || max(input).item<std::int64_t>() >= num_classes)) {
        throw IndexError("one_hot: class values must be in [0, " + std::to_string(num_classes) + ")");
    }
    const Tensor classes =
        arange(0, static_cast<double>(num_classes), 1, DType::I64, input.device());
    return eq(input.unsqueeze(-1), classes).to(DType::I64);
}

Tensor pad(const Tensor& input, const Shape& pad, double value) {
    if (pad.size() % 2 != 0 || static_cast<std::int64_t>(pad.size()) > 2 * input.dim()) {
        throw ValueError("pad: needs (before, after) pairs for at most " +
                         std::to_string(input.dim()) + " dims, got " + std::to_string(pad.size()) +
                         " numbers");
    }
    Tensor result = input;
    for (std::size_t pair = 0; pair < pad.size() / 2; ++pair) {
        const std::int64_t dim = input.dim() - 1 - static_cast<std::int64_t>(pair);
        const std::int64_t before = pad[2 * pair];
        const std::int64_t after = pad[2 * pair + 1];
        const std::int64_t size = result.size(dim);
        if (size + std::min<std::int64_t>(before, 0) + std::min<std::int64_t>(after, 0) < 0) {
            throw ValueError("pad: cropping " + std::to_string(-std::min<std::int64_t>(before, 0) -
                                                                std::min<std::int64_t>(after, 0)) +
                             " elements from dim " + std::to_string(dim) + " of size " +
                             std::to_string(size));
        }
        // Negative amounts crop (a view); positive ones join constant blocks.
        result = narrow(result, dim, std::max<std::int64_t>(-before, 0),
                        size + std::min<std::int64_t>(before, 0) + std::min<std::int64_t>(after, 0));
        const auto block = [&](std::int64_t amount) {
            Shape shape_of_block = result.shape();
            shape_of_block[static_cast<std::size_t>(dim)] = amount;
            return full(shape_of_block, value, result.dtype(), result.device());
        };
        std::vector<Tensor> parts;
        if (before > 0) {
            parts.push_back(block(before));
        }
        parts.push_back(result);
        if (after > 0) {
            parts.push_back(block(after));
        }
        if (parts.size() > 1) {
            result = cat(parts, dim);
        }
    }
    return result;
}

std::pair<Tensor, Tensor> attention_with_weights(const Tensor& query, const Tensor& key,
                                                 const Tensor& value, const Tensor& additive_mask,
                                                 double dropout_p, bool is_causal,
                                                 std::optional<double> scale) {
    const std::int64_t queries = query.size(-2);
    const std::int64_t keys = key.size(-2);
    const double factor = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
    Tensor scores = matmul(query, key.transpose(-2, -1)) * factor;
    if (is_causal) {
        const Tensor rows = arange(0, static_cast<double>(queries), 1, DType::I64, query.device());
        const Tensor columns = arange(0, static_cast<double>(keys), 1, DType::I64, query.device());
        scores = masked_fill(scores, lt(rows.unsqueeze(1), columns.unsqueeze(0)), -INFINITY);
    }
    if (additive_mask.defined()) {
        scores = scores + additive_mask;
    }
    Tensor weights = softmax(scores, -1);
    if (dropout_p > 0) {
        weights = dropout(weights, dropout_p, true);
    }
    return {matmul(weights, value), weights};
}

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const Tensor& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale) {
    for (const Tensor& input : {query, key, value}) {
        if (input.dim() < 2) {
            throw ValueError("scaled_dot_product_attention: query, key and value need at least 2 "
                             "dims ([..., L, E]), got shape " + to_string(input.shape()));
        }
    }
    const bool same_rank = query.dim() == key.dim() && key.dim() == value.dim();
    const bool fusable = !attn_mask.defined() && dropout_p == 0 && same_rank &&
                         (query.dim() == 3 || query.dim() == 4) &&
                         (!is_causal || query.size(-2) == key.size(-2));
    if (fusable) {
        if (query.dim() == 4) {
            return kael::scaled_dot_product_attention(query, key, value, is_causal, scale);
        }
        return kael::scaled_dot_product_attention(query.unsqueeze(1), key.unsqueeze(1),
                                                  value.unsqueeze(1), is_causal, scale)
            .squeeze(1);
    }
    Tensor additive;
    if (attn_mask.defined()) {
        additive = attn_mask.dtype() == DType::Bool
                       ? masked_fill(zeros(attn_mask.shape(), query.dtype(), query.device()),
                                     logical_not(attn_mask), -INFINITY)
                       : attn_mask;
    }
    return attention_with_weights(query, key, value, additive, dropout_p, is_causal, scale).first;
}

}  // namespace kael::nn::functional

// nn::MultiheadAttention: PyTorch's layer (parameters, masks, returned weights), over the fused
// attention kernel when no weights or masks are asked for.
#include <cmath>

#include "kael/autograd.h"
#include "kael/nn.h"
#include "kael/nn_functional.h"
#include "nn_internal.h"

namespace kael::nn {

MultiheadAttention::MultiheadAttention(std::int64_t embed, std::int64_t heads, double drop,
                                       bool bias, bool first, Device device)
    : embed_dim(embed), num_heads(heads), dropout(drop), batch_first(first) {
    detail::require_positive(embed, "MultiheadAttention", "embed_dim");
    detail::require_positive(heads, "MultiheadAttention", "num_heads");
    if (embed % heads != 0) {
        throw ValueError("MultiheadAttention: embed_dim " + std::to_string(embed) +
                         " must be divisible by num_heads " + std::to_string(heads));
    }
    detail::require_probability(drop, "MultiheadAttention", "dropout");
    // PyTorch's initialization: xavier_uniform_ projections, zero biases.
    const double bound = std::sqrt(6.0 / static_cast<double>(embed + 3 * embed));
    {
        const NoGradGuard guard;
        register_parameter("in_proj_weight", in_proj_weight,
                           ((rand({3 * embed, embed}) * 2.0 - 1.0) * bound).to(device));
        if (bias) {
            register_parameter("in_proj_bias", in_proj_bias, zeros({3 * embed}, DType::F32, device));
        }
    }
    out_proj = register_module("out_proj", std::make_shared<Linear>(embed, embed, bias, device));
    if (bias) {
        const NoGradGuard guard;
        out_proj->bias.fill_(0);
    }
}

namespace {

// A mask as scores to add: bool true becomes -inf (PyTorch's MHA convention), floats are added.
Tensor additive(const Tensor& mask, const Tensor& like) {
    if (mask.dtype() != DType::Bool) {
        return mask.to(like.dtype());
    }
    return masked_fill(zeros(mask.shape(), like.dtype(), like.device()), mask, -INFINITY);
}

// [N, T, E] to [N, heads, T, E / heads].
Tensor split_heads(const Tensor& x, std::int64_t heads) {
    return x.reshape({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

}  // namespace

std::pair<Tensor, Tensor> MultiheadAttention::forward(const Tensor& query, const Tensor& key,
                                                      const Tensor& value,
                                                      const AttentionOptions& options) {
    const bool batched = query.dim() == 3;
    if ((query.dim() != 2 && !batched) || key.dim() != query.dim() || value.dim() != query.dim()) {
        throw ValueError("MultiheadAttention: query, key and value must all be 3-d (batched) or "
                         "2-d (unbatched), got shapes " + to_string(query.shape()) + ", " +
                         to_string(key.shape()) + ", " + to_string(value.shape()));
    }
    for (const Tensor& input : {query, key, value}) {
        if (input.size(-1) != embed_dim) {
            throw ValueError("MultiheadAttention: inputs must end in embed_dim " +
                             std::to_string(embed_dim) + ", got shape " + to_string(input.shape()));
        }
    }
    // Everything below is batch first: [N, T, E].
    const auto batch_major = [&](const Tensor& x) {
        return !batched ? x.unsqueeze(0) : batch_first ? x : x.transpose(0, 1);
    };
    const std::vector<Tensor> weights = split(in_proj_weight, embed_dim, 0);
    const std::vector<Tensor> biases =
        in_proj_bias.defined() ? split(in_proj_bias, embed_dim, 0) : std::vector<Tensor>(3);
    const Tensor q = split_heads(linear(batch_major(query), weights[0], biases[0]), num_heads);
    const Tensor k = split_heads(linear(batch_major(key), weights[1], biases[1]), num_heads);
    const Tensor v = split_heads(linear(batch_major(value), weights[2], biases[2]), num_heads);
    const std::int64_t batch = q.size(0);
    const std::int64_t queries = q.size(2);
    const std::int64_t keys = k.size(2);

    Tensor mask;  // broadcasts to [N, heads, L, S]
    if (options.attn_mask.defined()) {
        const Tensor& m = options.attn_mask;
        if (m.dim() == 2 && m.shape() == Shape{queries, keys}) {
            mask = additive(m, q);
        } else if (m.dim() == 3 && m.shape() == Shape{batch * num_heads, queries, keys}) {
            mask = additive(m, q).reshape({batch, num_heads, queries, keys});
        } else {
            throw ValueError("MultiheadAttention: attn_mask must have shape [" +
                             std::to_string(queries) + ", " + std::to_string(keys) + "] or [" +
                             std::to_string(batch * num_heads) + ", " + std::to_string(queries) +
                             ", " + std::to_string(keys) + "], got " + to_string(m.shape()));
        }
    }
    if (options.key_padding_mask.defined()) {
        const Shape expected = batched ? Shape{batch, keys} : Shape{keys};
        if (options.key_padding_mask.shape() != expected) {
            throw ValueError("MultiheadAttention: key_padding_mask must have shape " +
                             to_string(expected) + ", got " +
                             to_string(options.key_padding_mask.shape()));
        }
        const Tensor padding = additive(options.key_padding_mask, q).reshape({batch, 1, 1, keys});
        mask = mask.defined() ? mask + padding : padding;
    }
    const double drop = is_training() ? dropout : 0.0;
    Tensor output;
    Tensor attention;
    if (!options.need_weights && !mask.defined() && drop == 0 &&
        (!options.is_causal || queries == keys)) {
        output = scaled_dot_product_attention(q, k, v, options.is_causal);
    } else {
        std::tie(output, attention) = functional::attention_with_weights(
            q, k, v, mask, drop, options.is_causal, std::nullopt);
    }
    output = out_proj->forward(output.transpose(1, 2).reshape({batch, queries, embed_dim}));
    output = !batched ? output.squeeze(0) : batch_first ? output : output.transpose(0, 1);
    if (!options.need_weights) {
        return {output, Tensor()};
    }
    if (options.average_attn_weights) {
        attention = mean(attention, 1);
    }
    return {output, batched ? attention : attention.squeeze(0)};
}

}  // namespace kael::nn

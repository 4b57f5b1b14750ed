#include "kael/gpt.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <utility>

#include "kael/autograd.h"
#include "kernel_calls.h"
#include "nn_internal.h"
#include "ops_index_internal.h"

namespace kael::nn {

MlpActivation mlp_activation(const GPTConfig& config, const char* who) {
    if (config.activation == "gelu_new" || config.activation == "gelu_pytorch_tanh") {
        return MlpActivation::GeluTanh;
    }
    if (config.activation == "gelu") {
        return MlpActivation::Gelu;
    }
    if (config.activation == "relu") {
        return MlpActivation::Relu;
    }
    throw ValueError(std::string(who) + ": activation " + detail::printable_name(config.activation) +
                     " is not supported (gelu_new, gelu_pytorch_tanh, gelu, relu)");
}

namespace {

// Every size positive, embed divisible by heads, dropout in [0, 1); who names the constructor.
void check_config(const GPTConfig& config, const char* who) {
    detail::require_positive(config.vocab_size, who, "vocab_size");
    detail::require_positive(config.block_size, who, "block_size");
    detail::require_positive(config.layers, who, "layers");
    detail::require_positive(config.heads, who, "heads");
    detail::require_positive(config.embed, who, "embed");
    if (config.embed % config.heads != 0) {
        throw ValueError(std::string(who) + ": embed " + std::to_string(config.embed) +
                         " is not divisible by heads " + std::to_string(config.heads));
    }
    detail::require_probability(config.dropout, who, "dropout");
    if (config.inner < 0) {
        throw ValueError(std::string(who) + ": inner must be 0 (4 * embed) or positive, got " +
                         std::to_string(config.inner));
    }
    if (!(config.layer_norm_eps >= 0 && std::isfinite(config.layer_norm_eps))) {
        throw ValueError(std::string(who) + ": layer_norm_eps must be non-negative and finite, got " +
                         detail::format_number(config.layer_norm_eps));
    }
    (void)mlp_activation(config, who);
}

// The keys and values of the cache after this step, without grad. Both are [B, H, T, D] views of
// one buffer of [B, capacity, 2, C] (a token's key, then its value), so a decoding step writes
// its new keys and values with one copy of the projection's last two thirds (two per-tensor
// appends were two kernels per layer) and attention reads them strided. `fresh` is that
// [B, S, 2C] slice; the old views are undefined before the first step, or any other tensors
// (made with grad on, or outgrown), which are then copied into a new buffer.
std::pair<Tensor, Tensor> append_to_cache(const Tensor& keys, const Tensor& values,
                                          const Tensor& fresh, std::int64_t heads,
                                          std::int64_t capacity) {
    const std::int64_t batch = fresh.size(0);
    const std::int64_t steps = fresh.size(1);
    const std::int64_t channels = fresh.size(2) / 2;
    const std::int64_t head_dim = channels / heads;
    const std::int64_t past = keys.defined() ? keys.size(2) : 0;
    const std::int64_t total = past + steps;
    const std::int64_t existing = detail::joint_room(keys, values);
    const bool reuse = existing >= total;
    const std::int64_t room = reuse ? existing : std::max(capacity, total);
    const Tensor joint =
        reuse ? keys.as_strided({batch, room, 2 * channels}, {room * 2 * channels, 2 * channels, 1},
                                keys.offset())
              : empty({batch, room, 2 * channels}, fresh.dtype(), fresh.device());
    // [B, H, tokens, D] over the joint rows; explicit strides, so that a batch of one keeps
    // room * 2C as its batch stride (the test above reads the room from it).
    const auto part = [&](std::int64_t which, std::int64_t tokens) {
        return joint.as_strided({batch, heads, tokens, head_dim},
                                {room * 2 * channels, head_dim, 2 * channels, 1},
                                joint.offset() + which * channels);
    };
    if (!reuse && past > 0) {  // a new buffer: the old keys and values move in
        part(0, past).copy_(keys);
        part(1, past).copy_(values);
    }
    joint.slice(1, past, total).copy_(fresh);
    return {part(0, total), part(1, total)};
}

}  // namespace

std::int64_t detail::joint_room(const Tensor& keys, const Tensor& values) {
    if (!keys.defined() || !values.defined() || keys.dim() != 4 ||
        keys.impl().storage != values.impl().storage || keys.strides() != values.strides() ||
        keys.shape() != values.shape()) {
        return 0;
    }
    const std::int64_t head_dim = keys.size(3);
    const std::int64_t channels = keys.size(1) * head_dim;
    const std::int64_t row = 2 * channels;
    const Shape& strides = keys.strides();
    if (values.offset() != keys.offset() + channels || strides[3] != 1 ||
        strides[1] != head_dim || strides[2] != row || strides[0] % row != 0) {
        return 0;
    }
    return strides[0] / row;
}

CausalSelfAttention::CausalSelfAttention(const GPTConfig& config, Device device)
    : heads_(config.heads), dropout_(config.dropout), capacity_(config.block_size) {
    check_config(config, "CausalSelfAttention");
    query_key_value_ = register_module(
        "query_key_value", std::make_shared<Linear>(config.embed, 3 * config.embed, true, device));
    projection_ = register_module("projection",
                                  std::make_shared<Linear>(config.embed, config.embed, true, device));
}

// One token's attention over a fixed cache: its key and value are added into the slot at the
// device position (zero until now, so adding is writing: scatter_add is the kernel that takes
// a device index), and the fused kernel reads the slots up to it.
Tensor CausalSelfAttention::attend_fixed(const Tensor& qkv, Tensor* cached_keys,
                                         Tensor* cached_values, const DevicePosition& at) {
    const std::int64_t batch = qkv.size(0);
    const std::int64_t channels = qkv.size(2) / 3;
    const std::int64_t head_dim = channels / heads_;
    const Tensor& keys = *cached_keys;
    const std::int64_t room = keys.size(2);
    if (qkv.size(1) != 1 || detail::joint_room(keys, *cached_values) != room ||
        at.write_index.shape() != Shape{batch, 1, 2 * channels}) {
        throw ValueError("GPT: a fixed KV cache takes one token per step, in its joint buffer");
    }
    const auto heads = [&](std::int64_t part) {  // [B, H, 1, D] views of the projection
        return qkv.slice(2, part * channels, (part + 1) * channels)
            .reshape({batch, 1, heads_, head_dim})
            .transpose(1, 2);
    };
    const Tensor query = heads(0);
    // One kernel stores the key and value and attends where the device has it.
    std::optional<Tensor> mixed = kael::detail::cached_attention_appending(
        query, keys, *cached_values, heads(1), heads(2), at.lengths, true, std::nullopt);
    if (!mixed) {
        Tensor joint = keys.as_strided({batch, room, 2 * channels},
                                       {room * 2 * channels, 2 * channels, 1}, keys.offset());
        kael::detail::scatter_add_unchecked(joint, 1, at.write_index,
                                            qkv.slice(2, channels, 3 * channels));
        mixed = kael::detail::cached_attention_unchecked(query, keys, *cached_values, at.lengths,
                                                         true, std::nullopt);
    }
    return mixed->transpose(1, 2).reshape({batch, 1, channels});
}

Tensor CausalSelfAttention::forward_cached(const Tensor& x, Tensor* cached_keys,
                                           Tensor* cached_values, const DevicePosition* at,
                                           const Tensor& residual, const LayerNorm* norm) {
    const std::int64_t batch = x.size(0);
    const std::int64_t steps = x.size(1);
    const std::int64_t channels = x.size(2);
    const std::int64_t head_dim = channels / heads_;
    // Views of the projection: attention reads them strided, and split's backward takes
    // attention's dq, dk, dv (laid out as one qkv buffer) as the projection's gradient.
    const Tensor qkv = norm != nullptr
                           ? layer_norm_linear(x, norm->weight, norm->bias, norm->eps,
                                               query_key_value_->weight, query_key_value_->bias)
                           : query_key_value_->forward(x);
    if (at != nullptr) {
        return projection_->forward(attend_fixed(qkv, cached_keys, cached_values, *at),
                                    Activation::None, residual);
    }
    const std::vector<Tensor> parts = split(qkv, channels, 2);
    auto heads = [&](const Tensor& part) {
        return part.reshape({batch, steps, heads_, head_dim}).transpose(1, 2);
    };
    Tensor query = heads(parts[0]);
    Tensor key = heads(parts[1]);
    Tensor value = heads(parts[2]);
    if (cached_keys != nullptr) {
        if (!is_grad_enabled()) {
            std::tie(key, value) = append_to_cache(*cached_keys, *cached_values,
                                                   qkv.slice(2, channels, 3 * channels), heads_,
                                                   capacity_);
        } else if (cached_keys->defined()) {
            key = cat({*cached_keys, key}, 2);  // differentiable in the new keys and values
            value = cat({*cached_values, value}, 2);
        }
        *cached_keys = key.detach();
        *cached_values = value.detach();
    }
    if (dropout_ == 0 || !is_training()) {
        // The fused op writes [B, T, H, D] memory, so merging the heads is a view.
        const Tensor mixed = scaled_dot_product_attention(query, key, value, true)
                                 .transpose(1, 2)
                                 .reshape({batch, steps, channels});
        return projection_->forward(mixed, Activation::None, residual);
    }
    // Dropout on the attention probabilities needs them in memory: the composed path.
    const std::int64_t total = key.size(2);
    const std::int64_t past = total - steps;
    Tensor scores = matmul(query, key.transpose(-2, -1)) * (1.0 / std::sqrt(double(head_dim)));
    // Query i (at position past + i) may not see keys after it.
    const Tensor rows = arange(static_cast<double>(past), static_cast<double>(total), 1,
                               DType::I64, x.device())
                            .unsqueeze(1);
    const Tensor columns =
        arange(0, static_cast<double>(total), 1, DType::I64, x.device()).unsqueeze(0);
    scores = masked_fill(scores, gt(columns, rows), -INFINITY);
    Tensor attention = dropout(softmax(scores, -1), dropout_, is_training());
    const Tensor mixed =
        matmul(attention, value).transpose(1, 2).reshape({batch, steps, channels});
    return projection_->forward(mixed, Activation::None, residual);
}

Block::Block(const GPTConfig& config, Device device)
    : dropout_(config.dropout), activation_(mlp_activation(config, "Block")) {
    check_config(config, "Block");
    const std::int64_t inner = config.inner > 0 ? config.inner : 4 * config.embed;
    const double eps = config.layer_norm_eps;
    norm1_ = register_module("norm1", std::make_shared<LayerNorm>(config.embed, eps, device));
    attention_ =
        register_module("attention", std::make_shared<CausalSelfAttention>(config, device));
    norm2_ = register_module("norm2", std::make_shared<LayerNorm>(config.embed, eps, device));
    expand_ = register_module("expand",
                              std::make_shared<Linear>(config.embed, inner, true, device));
    contract_ =
        register_module("contract", std::make_shared<Linear>(inner, config.embed, true, device));
}

Tensor Block::forward_cached(const Tensor& x, Tensor* cached_keys, Tensor* cached_values,
                             const DevicePosition* at) {
    // The residual adds and gelu ride in the products' epilogues where the device fuses them.
    // So do the layer norms, in the products' kernels (layer_norm_linear).
    const Tensor attended =
        attention_->forward_cached(x, cached_keys, cached_values, at, x, norm1_.get());
    const auto expanded = [&](Activation activation) {
        return layer_norm_linear(attended, norm2_->weight, norm2_->bias, norm2_->eps,
                                 expand_->weight, expand_->bias, activation);
    };
    const Tensor hidden = activation_ == MlpActivation::GeluTanh ? expanded(Activation::GeluTanh)
                          : activation_ == MlpActivation::Gelu
                              ? gelu(expanded(Activation::None), false)
                              : relu(expanded(Activation::None));
    if (dropout_ == 0 || !is_training()) {
        return contract_->forward(hidden, Activation::None, attended);
    }
    return attended + dropout(contract_->forward(hidden), dropout_, is_training());
}

GPT::GPT(const GPTConfig& config, Device device) : config_(config) {
    check_config(config, "GPT");
    token_embedding_ = register_module(
        "token_embedding", std::make_shared<Embedding>(config.vocab_size, config.embed, device));
    position_embedding_ = register_module(
        "position_embedding", std::make_shared<Embedding>(config.block_size, config.embed, device));
    for (std::int64_t i = 0; i < config.layers; ++i) {
        blocks_.push_back(register_module("blocks." + std::to_string(i),
                                          std::make_shared<Block>(config, device)));
    }
    final_norm_ = register_module(
        "final_norm", std::make_shared<LayerNorm>(config.embed, config.layer_norm_eps, device));
    head_ = register_module("head",
                            std::make_shared<Linear>(config.embed, config.vocab_size, false, device));
    if (config.tie_embeddings) {  // one tensor: the head's own initial weight is dropped
        head_->weight = token_embedding_->weight;
    }
}

Tensor GPT::forward(const Tensor& tokens) { return forward(tokens, nullptr); }

Tensor GPT::forward(const Tensor& tokens, KVCache* cache) {
    if (cache != nullptr && cache->position.defined()) {
        return forward_fixed(tokens, *cache);
    }
    return head_->forward(features(tokens, cache));
}

Tensor GPT::features(const Tensor& tokens, KVCache* cache) {
    if (tokens.dim() != 2 || tokens.dtype() != DType::I64) {
        throw ValueError("GPT: expected i64 tokens [B, T], got " + to_string(tokens.dtype()) + " " +
                         to_string(tokens.shape()));
    }
    const std::int64_t past = cache != nullptr ? cache->length() : 0;
    const std::int64_t steps = tokens.size(1);
    if (past + steps > config_.block_size) {
        throw ValueError("GPT: " + std::to_string(past + steps) +
                         " positions exceed block_size " + std::to_string(config_.block_size));
    }
    if (cache != nullptr && cache->keys.empty()) {
        cache->keys.resize(blocks_.size());
        cache->values.resize(blocks_.size());
    }
    const Tensor positions = arange(static_cast<double>(past), static_cast<double>(past + steps),
                                    1, DType::I64, tokens.device());
    Tensor x = token_embedding_->forward(tokens) + position_embedding_->forward(positions);
    x = dropout(x, config_.dropout, is_training());
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
        x = blocks_[i]->forward_cached(x, cache != nullptr ? &cache->keys[i] : nullptr,
                                       cache != nullptr ? &cache->values[i] : nullptr);
    }
    return final_norm_->forward(x);
}

// A step over a fixed cache: the position embedding is looked up at the device position.
Tensor GPT::forward_fixed(const Tensor& tokens, KVCache& cache) {
    if (tokens.size(1) != 1 || cache.keys.size() != blocks_.size()) {
        throw ValueError("GPT: a fixed KV cache takes one token per step, got " +
                         to_string(tokens.shape()));
    }
    const Tensor& keys = cache.keys[0];
    const std::int64_t batch = tokens.size(0);
    if (tokens.dtype() != DType::I64 || cache.position.dtype() != DType::I64 ||
        cache.position.dim() != 1 || cache.position.size(0) != batch ||
        keys.size(0) != batch) {
        throw ValueError("GPT: a fixed KV cache's position must be i64 [B] for tokens [B, 1], got " +
                         to_string(cache.position.shape()) + " for " + to_string(tokens.shape()));
    }
    // The step writes slot position of every layer: one check for all of them.
    kael::detail::check_indices(cache.position, 0, keys.size(2), 1, "GPT", "KV cache position");
    // The write index is a view (stride 0 along the row): the scatter then copies whole rows.
    const DevicePosition at{
        cache.position + 1,
        cache.position.reshape({batch, 1, 1}).expand({batch, 1, 2 * config_.embed})};
    return forward_at(tokens, cache, at);
}

Tensor GPT::forward_at(const Tensor& tokens, KVCache& cache, const DevicePosition& at) {
    const std::int64_t batch = tokens.size(0);
    Tensor x = token_embedding_->forward(tokens) +
               position_embedding_->forward(cache.position.reshape({batch, 1}));
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
        x = blocks_[i]->forward_cached(x, &cache.keys[i], &cache.values[i], &at);
    }
    return layer_norm_linear(x, final_norm_->weight, final_norm_->bias, final_norm_->eps,
                             head_->weight, Tensor());
}

Tensor GPT::loss(const Tensor& tokens, const Tensor& targets) {
    const Tensor logits = forward(tokens);
    return cross_entropy(logits.reshape({-1, config_.vocab_size}), targets.reshape({-1}));
}

}  // namespace kael::nn

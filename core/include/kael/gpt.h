#pragma once
// A GPT decoder: token and position embeddings, pre-norm causal self-attention blocks, a KV
// cache for generation.
#include <optional>
#include <vector>

#include "kael/nn.h"

namespace kael::nn {

struct GPTConfig {
    std::int64_t vocab_size = 256;
    std::int64_t block_size = 64;  // longest context
    std::int64_t layers = 2;
    std::int64_t heads = 2;
    std::int64_t embed = 64;       // divisible by heads
    double dropout = 0.0;
};

// Keys and values of every layer for the tokens seen so far, [B, H, T, head_dim] each.
struct KVCache {
    std::vector<Tensor> keys;
    std::vector<Tensor> values;
    // Defined for a cache of fixed capacity whose fill level lives on the device (i64 [1], the
    // position of the next token), so that one recorded decoding step serves every position:
    // keys and values then span the capacity with zeros past the position, and a step of one
    // token adds its key and value there and attends to the slots up to it.
    Tensor position;
    [[nodiscard]] std::int64_t length() const { return keys.empty() ? 0 : keys[0].size(2); }
};

// cache (filled by eager steps of batch 1) as a fixed cache over the same buffers: its views
// widened to the capacity, the slots past its length zeroed, position = its length. nullopt
// when its layout is not the one GPT's eager steps make.
[[nodiscard]] std::optional<KVCache> fixed_capacity(const KVCache& cache);

// What every layer of one step over a fixed cache needs, made once per step: the filled
// lengths (position + 1, i64 [B]) and the index that adds the step's keys and values at
// position into a layer's joint [B, capacity, 2C] rows (i64 [B, 1, 2C]).
struct DevicePosition {
    Tensor lengths;
    Tensor write_index;
};

class CausalSelfAttention : public Module {
public:
    CausalSelfAttention(const GPTConfig& config, Device device);
    // x [B, T, C]; with a cache, x holds only the new tokens and the cache grows by T. With at,
    // the cache is a fixed one (KVCache::position) and T is 1. residual, when defined, is added
    // to the output (in the projection's epilogue where the device fuses it).
    Tensor forward_cached(const Tensor& x, Tensor* cached_keys, Tensor* cached_values,
                          const DevicePosition* at = nullptr, const Tensor& residual = Tensor());

private:
    Tensor attend_fixed(const Tensor& qkv, Tensor* cached_keys, Tensor* cached_values,
                        const DevicePosition& at);
    std::int64_t heads_;
    double dropout_;
    std::int64_t capacity_;  // tokens a KV cache holds before generate restarts it
    std::shared_ptr<Linear> query_key_value_;
    std::shared_ptr<Linear> projection_;
};

class Block : public Module {
public:
    Block(const GPTConfig& config, Device device);
    Tensor forward_cached(const Tensor& x, Tensor* cached_keys, Tensor* cached_values,
                          const DevicePosition* at = nullptr);

private:
    double dropout_;
    std::shared_ptr<LayerNorm> norm1_;
    std::shared_ptr<CausalSelfAttention> attention_;
    std::shared_ptr<LayerNorm> norm2_;
    std::shared_ptr<Linear> expand_;
    std::shared_ptr<Linear> contract_;
};

class GPT : public Module {
public:
    explicit GPT(const GPTConfig& config, Device device = kCPU);
    // tokens i64 [B, T] -> logits [B, T, vocab]. With a cache, tokens are the new ones only.
    Tensor forward(const Tensor& tokens) override;
    Tensor forward(const Tensor& tokens, KVCache* cache);
    // Mean cross entropy of next-token predictions.
    Tensor loss(const Tensor& tokens, const Tensor& targets);
    // Greedy (temperature 0) or sampled continuation of prompt, using the KV cache.
    std::vector<std::int64_t> generate(const std::vector<std::int64_t>& prompt,
                                       std::int64_t new_tokens, double temperature = 0);
    [[nodiscard]] const GPTConfig& config() const { return config_; }
    [[nodiscard]] Device device() const { return token_embedding_->weight.device(); }

private:
    // Greedy steps from a cache filled by an eager step, replayed as one recorded device graph
    // each, until new_tokens or the context is full (gpt_generate.cpp). Returns how many.
    Tensor forward_fixed(const Tensor& tokens, KVCache& cache);
    std::int64_t decode_recorded(KVCache& cache, Tensor& step, std::int64_t new_tokens,
                                 std::vector<Tensor>& pending, Tensor& largest_magnitude);

    GPTConfig config_;
    std::shared_ptr<Embedding> token_embedding_;
    std::shared_ptr<Embedding> position_embedding_;
    std::vector<std::shared_ptr<Block>> blocks_;
    std::shared_ptr<LayerNorm> final_norm_;
    std::shared_ptr<Linear> head_;
};

}  // namespace kael::nn

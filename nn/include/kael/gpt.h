#pragma once
// A GPT decoder: token and position embeddings, pre-norm causal self-attention blocks, a KV
// cache for generation.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
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
    double layer_norm_eps = 1e-5;
    // The MLP's activation, by its Hugging Face name: "gelu_new" (GPT-2's tanh approximation;
    // also "gelu_pytorch_tanh"), "gelu" (exact, erf) or "relu".
    std::string activation = "gelu_new";
    std::int64_t inner = 0;            // the MLP's width; 0: 4 * embed
    bool tie_embeddings = false;       // the head uses the token embedding's tensor
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

enum class MlpActivation { GeluTanh, Gelu, Relu };
// config.activation as an MlpActivation; ValueError naming who and the name otherwise.
[[nodiscard]] MlpActivation mlp_activation(const GPTConfig& config, const char* who);

// config.json of a GPT-2 checkpoint as a GPTConfig (transformers' GPT2Config defaults for
// absent fields); ValueError naming the file and field for what GPT cannot run.
[[nodiscard]] GPTConfig gpt2_config_from_json(const std::string& path);

class CausalSelfAttention : public Module {
public:
    CausalSelfAttention(const GPTConfig& config, Device device);
    // x [B, T, C]; with a cache, x holds only the new tokens and the cache grows by T. With at,
    // the cache is a fixed one (KVCache::position) and T is 1. residual, when defined, is added
    // to the output (in the projection's epilogue where the device fuses it). norm, when given,
    // normalises x first (in the projection's kernel where the device fuses it).
    Tensor forward_cached(const Tensor& x, Tensor* cached_keys, Tensor* cached_values,
                          const DevicePosition* at = nullptr, const Tensor& residual = Tensor(),
                          const LayerNorm* norm = nullptr);

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
    MlpActivation activation_;
    std::shared_ptr<LayerNorm> norm1_;
    std::shared_ptr<CausalSelfAttention> attention_;
    std::shared_ptr<LayerNorm> norm2_;
    std::shared_ptr<Linear> expand_;
    std::shared_ptr<Linear> contract_;
};

// How GPT::generate continues prompts (the names of transformers' GenerationConfig).
struct GenerationConfig {
    std::int64_t max_new_tokens = 32;
    // 0: greedy (the most likely token). Otherwise sampled from softmax(logits / temperature),
    // among the top_k most likely tokens (0: all), then among the fewest whose probabilities
    // sum to at least top_p (1: all), as transformers orders these steps.
    double temperature = 0;
    std::int64_t top_k = 0;
    double top_p = 1.0;
    // Sampling draws from a generator seeded with it, so a seed gives the same text on every
    // device; without one, the seed comes from kael's generator (kael::manual_seed).
    std::optional<std::uint64_t> seed;
    // A row stops after producing this token (GPT-2's <|endoftext|> is 50256).
    std::optional<std::int64_t> eos_token_id;
    // Called with each new token of each row, in order; returning false stops that row.
    std::function<bool(std::size_t row, std::int64_t token)> on_token;
};

class GPT : public Module {
public:
    [[nodiscard]] std::string type_name() const override { return "GPT"; }
    explicit GPT(const GPTConfig& config, Device device = kCPU);
    // tokens i64 [B, T] -> logits [B, T, vocab]. With a cache, tokens are the new ones only.
    Tensor forward(const Tensor& tokens) override;
    Tensor forward(const Tensor& tokens, KVCache* cache);
    // Mean cross entropy of next-token predictions.
    Tensor loss(const Tensor& tokens, const Tensor& targets);
    // The new tokens of each prompt (prompts may differ in length; each row continues as it
    // would alone). One preallocated KV cache of n_positions slots per row; when a row fills
    // it, every row restarts from its latest 3/4 of n_positions tokens (sliding). Greedy steps
    // are replayed as one recorded device graph each where the device records.
    std::vector<std::vector<std::int64_t>> generate(
        const std::vector<std::vector<std::int64_t>>& prompts, const GenerationConfig& options);
    // The prompt followed by new_tokens greedy (temperature 0) or sampled tokens.
    std::vector<std::int64_t> generate(const std::vector<std::int64_t>& prompt,
                                       std::int64_t new_tokens, double temperature = 0);
    [[nodiscard]] const GPTConfig& config() const { return config_; }

    // GPT-2 from a folder as transformers' save_pretrained writes it (config.json and
    // model.safetensors; F32, F16 or BF16), in eval mode on device. A missing, extra or
    // mis-shaped tensor is a ValueError naming it (gpt_pretrained.cpp has the name mapping).
    static std::shared_ptr<GPT> from_pretrained(const std::string& folder,
                                                Device device = kCPU);
    // The inverse: config.json and model.safetensors (F32) that transformers reads.
    void save_pretrained(const std::string& folder) const;
    [[nodiscard]] Device device() const { return token_embedding_->weight.device(); }

private:
    friend class Decoder;  // gpt_generate.cpp
    // The final norm's output [B, T, C], before the head.
    Tensor features(const Tensor& tokens, KVCache* cache);
    // A step of one token per row over a fixed cache (KVCache::position i64 [B]).
    Tensor forward_fixed(const Tensor& tokens, KVCache& cache);
    // forward_fixed once cache.position is known in range and at is its lengths and index.
    Tensor forward_at(const Tensor& tokens, KVCache& cache, const DevicePosition& at);

    GPTConfig config_;
    std::shared_ptr<Embedding> token_embedding_;
    std::shared_ptr<Embedding> position_embedding_;
    std::vector<std::shared_ptr<Block>> blocks_;
    std::shared_ptr<LayerNorm> final_norm_;
    std::shared_ptr<Linear> head_;
};

}  // namespace kael::nn

// GPT::generate: an eager prefill of every prompt into one preallocated KV cache, then steps of
// one token per row over it. Where the device records (kael::DeviceGraph), a step is one
// recorded graph replayed per token: a decoding step of a small model is ~70 kernels of a few
// microseconds each, so launching them one by one from the host would set the pace.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "gpt_sampling.h"
#include "kael/autograd.h"
#include "kael/device_graph.h"
#include "kael/gpt.h"
#include "kael/ops.h"
#include "kael/random.h"
#include "nn_internal.h"
#include "ops_index_internal.h"

namespace kael::nn {

namespace {

// KAEL_DEVICE_GRAPHS=0 keeps every step eager (to compare, or to rule graphs out).
bool record_decoding(const Device& device) {
    static const bool allowed = [] {
        const char* setting = std::getenv("KAEL_DEVICE_GRAPHS");
        return setting == nullptr || std::string(setting) != "0";
    }();
    return allowed && DeviceGraph::supported(device);
}

// Greedy tokens of a recorded step are read back in chunks of this many steps: one wait per
// chunk, not per token (eager steps wait anyway, so they hand each token over at once).
constexpr std::int64_t kGreedyChunk = 16;

}  // namespace

std::optional<KVCache> fixed_capacity(const KVCache& cache) {
    if (cache.keys.empty() || cache.keys.size() != cache.values.size() ||
        cache.position.defined()) {
        return std::nullopt;
    }
    const std::int64_t past = cache.length();
    KVCache fixed;
    for (std::size_t i = 0; i < cache.keys.size(); ++i) {
        const Tensor& keys = cache.keys[i];
        const Tensor& values = cache.values[i];
        const std::int64_t room = detail::joint_room(keys, values);
        if (room == 0 || keys.size(0) != 1 || keys.size(2) != past) {
            return std::nullopt;
        }
        // The same views, widened to the whole room.
        const Shape whole{1, keys.size(1), room, keys.size(3)};
        fixed.keys.push_back(keys.as_strided(whole, keys.strides(), keys.offset()));
        fixed.values.push_back(values.as_strided(whole, values.strides(), values.offset()));
    }
    const NoGradGuard guard;
    for (const Tensor& keys : fixed.keys) {
        // A step adds into the slots after the filled ones (attend_fixed): zero them.
        const std::int64_t room = keys.size(2);
        const std::int64_t row = 2 * keys.size(1) * keys.size(3);
        keys.as_strided({1, room, row}, {room * row, row, 1}, keys.offset())
            .slice(1, past, room)
            .copy_(cached_scalar(0, keys.dtype(), keys.device()));
    }
    const Device device = fixed.keys[0].device();
    fixed.position = full({1}, static_cast<double>(past), DType::I64, device);
    return fixed;
}

// One generate call: the rows' tokens on the host, the cache and step buffers on the device.
class Decoder {
public:
    Decoder(GPT& model, const std::vector<std::vector<std::int64_t>>& prompts,
            const GenerationConfig& options)
        : model_(model), options_(options), rows_(prompts.size()), context_(prompts),
          produced_(rows_), done_(rows_, options.max_new_tokens == 0), position_(rows_, 0) {
        const GPTConfig& config = model.config();
        capacity_ = config.block_size;
        keep_ = std::max<std::int64_t>(1, capacity_ - std::max<std::int64_t>(1, capacity_ / 4));
        device_ = model.device();
        const auto batch = static_cast<std::int64_t>(rows_);
        const std::int64_t row = 2 * config.embed;
        const std::int64_t head_dim = config.embed / config.heads;
        // The keys and values in the model's dtype (bf16 or f16 after model.bfloat16()).
        const DType dtype = model.parameters().front().dtype();
        for (std::size_t i = 0; i < model.blocks_.size(); ++i) {
            const Tensor joint = zeros({batch, capacity_, row}, dtype, device_);
            joints_.push_back(joint);
            // [B, H, capacity, D] views of the keys and of the values (C further on).
            const Shape whole{batch, config.heads, capacity_, head_dim};
            const Shape strides{capacity_ * row, head_dim, row, 1};
            fixed_.keys.push_back(joint.as_strided(whole, strides, joint.offset()));
            fixed_.values.push_back(joint.as_strided(whole, strides, joint.offset() + config.embed));
        }
        // Each row's position, its length (position + 1) and the greedy chunk's column in one
        // buffer, so that a step advances all three with one add.
        steps_ = zeros({3 * batch}, DType::I64, device_);
        ones_ = full({3 * batch}, 1, DType::I64, device_);
        fixed_.position = steps_.slice(0, 0, batch);
        at_.lengths = steps_.slice(0, batch, 2 * batch);
        at_.write_index = fixed_.position.reshape({batch, 1, 1}).expand({batch, 1, row});
        token_ = zeros({batch, 1}, DType::I64, device_);
        if (options.temperature > 0) {
            engine_.seed(options.seed ? *options.seed
                                      : static_cast<std::uint64_t>(
                                            rand({1}, DType::F64).item<double>() * 0x1.0p53));
            logits_ = zeros({batch, config.vocab_size}, DType::F32, device_);
        } else {
            picked_ = zeros({batch, kGreedyChunk}, DType::I64, device_);
            picked_logits_ = zeros({batch, kGreedyChunk}, DType::F32, device_);
            column_ = steps_.slice(0, 2 * batch, 3 * batch).reshape({batch, 1});
        }
    }

    std::vector<std::vector<std::int64_t>> run() {
        if (!finished()) {
            choose(prefill(capacity_));
        }
        while (!finished()) {
            const std::int64_t fullest = *std::max_element(position_.begin(), position_.end());
            if (fullest >= capacity_) {
                choose(prefill(keep_));  // sliding: every row restarts from its latest tokens
                continue;
            }
            const std::int64_t room = capacity_ - fullest;
            if (options_.temperature > 0) {
                sampled_step();
            } else {
                const std::int64_t chunk = record_decoding(device_) ? kGreedyChunk : 1;
                greedy_steps(std::min({chunk, room, longest_remaining()}));
            }
        }
        return produced_;
    }

private:
    bool finished() const { return std::all_of(done_.begin(), done_.end(), [](bool d) { return d; }); }

    std::int64_t longest_remaining() const {
        std::int64_t most = 0;
        for (std::size_t r = 0; r < rows_; ++r) {
            if (!done_[r]) {
                most = std::max(most, options_.max_new_tokens -
                                          static_cast<std::int64_t>(produced_[r].size()));
            }
        }
        return std::max<std::int64_t>(most, 1);
    }

    // Takes row's next token; a finished row ignores it (it keeps stepping with the batch).
    void accept(std::size_t row, std::int64_t token) {
        if (done_[row]) {
            return;
        }
        context_[row].push_back(token);
        produced_[row].push_back(token);
        const bool go_on = !options_.on_token || options_.on_token(row, token);
        done_[row] = !go_on || (options_.eos_token_id && token == *options_.eos_token_id) ||
                     static_cast<std::int64_t>(produced_[row].size()) >= options_.max_new_tokens;
    }

    // Runs each row's latest `window` tokens (right-padded to the longest) through the model
    // into the cache's first slots; returns the logits after each row's last token, [B, V].
    Tensor prefill(std::int64_t window) {
        const auto batch = static_cast<std::int64_t>(rows_);
        std::vector<std::int64_t> lengths(rows_);
        std::int64_t longest = 0;
        for (std::size_t r = 0; r < rows_; ++r) {
            lengths[r] = std::min<std::int64_t>(window, static_cast<std::int64_t>(context_[r].size()));
            longest = std::max(longest, lengths[r]);
        }
        std::vector<std::int64_t> padded(rows_ * static_cast<std::size_t>(longest), 0);
        std::vector<std::int64_t> last(rows_);  // flat index of each row's last real token
        for (std::size_t r = 0; r < rows_; ++r) {
            const auto start = context_[r].end() - lengths[r];
            std::copy(start, context_[r].end(), padded.begin() + static_cast<std::ptrdiff_t>(r * longest));
            last[r] = static_cast<std::int64_t>(r) * longest + lengths[r] - 1;
            position_[r] = lengths[r];
        }
        KVCache growing;  // empty views at the start of the preallocated buffers
        for (std::size_t i = 0; i < fixed_.keys.size(); ++i) {
            growing.keys.push_back(fixed_.keys[i].slice(2, 0, 0));
            growing.values.push_back(fixed_.values[i].slice(2, 0, 0));
        }
        const Tensor features =
            model_.features(tensor(padded, {batch, longest}, device_), &growing);
        // A step adds its key and value into a zero slot (attend_fixed): zero every slot past
        // each row's length, padding included.
        const Tensor lengths_on_device = tensor(lengths, {batch}, device_);
        const Tensor filled = lt(arange(0, static_cast<double>(capacity_), 1, DType::I64, device_)
                                     .reshape({1, capacity_, 1}),
                                 lengths_on_device.reshape({batch, 1, 1}));
        for (Tensor& joint : joints_) {
            joint.copy_(where(filled, joint, cached_scalar(0, joint.dtype(), device_)));
        }
        fixed_.position.copy_(lengths_on_device);
        at_.lengths.copy_(lengths_on_device + 1);
        const Tensor rows = index_select(features.reshape({batch * longest, -1}), 0,
                                         tensor(last, {batch}, device_));
        return model_.head_->forward(rows);
    }

    // The first token after a prefill, from its logits [B, V].
    void choose(const Tensor& logits) {
        std::vector<std::int64_t> next(rows_);
        if (options_.temperature > 0) {
            sample_rows(logits, next);
        } else {
            const auto [largest, tokens] = max_with_indices(logits.to(DType::F32), 1);
            check_finite(largest.to_vector<float>());
            next = tokens.to_vector<std::int64_t>();
        }
        feed(next);
    }

    // Takes each row's next token and makes it the next step's input.
    void feed(const std::vector<std::int64_t>& next) {
        for (std::size_t r = 0; r < rows_; ++r) {
            accept(r, next[r]);
        }
        token_.copy_(tensor(next, {static_cast<std::int64_t>(rows_), 1}, device_));
    }

    void sample_rows(const Tensor& logits, std::vector<std::int64_t>& next) {
        const std::vector<float> host = logits.to_vector<float>();
        const std::int64_t vocab = logits.size(1);
        for (std::size_t r = 0; r < rows_; ++r) {
            next[r] = done_[r] ? 0
                               : detail::sample_token(host.data() + r * static_cast<std::size_t>(vocab),
                                                      vocab, options_, engine_, scratch_);
        }
    }

    // A picked token's logit is NaN or infinite only when the model's are (NaN weights would
    // pick one token forever): the greedy step keeps each, and this checks them.
    static void check_finite(const std::vector<float>& picked) {
        if (!std::all_of(picked.begin(), picked.end(), [](float v) { return std::isfinite(v); })) {
            throw ValueError("generate: the model produced non-finite logits");
        }
    }

    // The work of one step, recorded once where the device can and replayed per token. Its
    // positions are in range by construction (position_ tracks them on the host), so the step
    // runs forward_at without forward_fixed's check.
    void step_work() {
        const Tensor logits = model_.forward_at(token_, fixed_, at_).select(1, 0);  // [B, V]
        if (options_.temperature > 0) {
            logits_.copy_(logits);
        } else {
            // The largest logit and its index in one pass (in f32, as the reductions run).
            const auto [largest, next] = max_with_indices(logits.to(DType::F32), 1, true);
            // The chunk's column was 0 in both buffers: adding is writing, at a device index
            // (below kGreedyChunk by construction, so no index check).
            kael::detail::scatter_add_unchecked(picked_, 1, column_, next);
            kael::detail::scatter_add_unchecked(picked_logits_, 1, column_, largest);
            token_.copy_(next);
        }
        add_(steps_, ones_);  // position, length and the chunk's column
    }

    void step() {
        if (!graph_ && record_decoding(device_)) {
            graph_ = DeviceGraph::record(device_, [this] { step_work(); });
        }
        if (graph_) {
            graph_->replay();
        } else {
            step_work();
        }
    }

    void greedy_steps(std::int64_t count) {
        picked_.fill_(0);
        picked_logits_.fill_(0);
        column_.fill_(0);
        for (std::int64_t i = 0; i < count; ++i) {
            step();
        }
        for (std::int64_t& position : position_) {
            position += count;
        }
        const std::vector<float> logits = picked_logits_.to_vector<float>();
        std::vector<float> filled;
        for (std::size_t r = 0; r < rows_; ++r) {
            const auto row = logits.begin() + static_cast<std::ptrdiff_t>(r * kGreedyChunk);
            filled.insert(filled.end(), row, row + count);
        }
        check_finite(filled);
        const std::vector<std::int64_t> tokens = picked_.to_vector<std::int64_t>();
        for (std::int64_t i = 0; i < count; ++i) {
            for (std::size_t r = 0; r < rows_; ++r) {
                accept(r, tokens[r * kGreedyChunk + static_cast<std::size_t>(i)]);
            }
        }
    }

    void sampled_step() {
        step();
        for (std::int64_t& position : position_) {
            ++position;
        }
        std::vector<std::int64_t> next(rows_);
        sample_rows(logits_, next);
        feed(next);
    }

    GPT& model_;
    const GenerationConfig& options_;
    std::size_t rows_;
    std::vector<std::vector<std::int64_t>> context_;   // each row's tokens so far
    std::vector<std::vector<std::int64_t>> produced_;  // each row's new tokens
    std::vector<bool> done_;
    std::vector<std::int64_t> position_;  // each row's filled slots (fixed_.position on the host)
    std::int64_t capacity_ = 0;
    std::int64_t keep_ = 0;  // tokens a row keeps when its cache is full
    Device device_;
    std::vector<Tensor> joints_;  // per layer [B, capacity, 2C]: a token's key, then its value
    KVCache fixed_;
    DevicePosition at_;     // lengths in steps_, write index a view of fixed_.position
    Tensor steps_;          // i64 [3B]: positions, lengths, the chunk's column (each row's)
    Tensor ones_;           // i64 [3B] of 1
    Tensor token_;          // [B, 1]: each row's latest token, the next step's input
    Tensor logits_;         // sampling: the step's logits [B, V]
    Tensor picked_;         // greedy: [B, kGreedyChunk] tokens of the chunk so far
    Tensor picked_logits_;  // greedy: [B, kGreedyChunk] f32, each picked token's logit
    Tensor column_;         // greedy: [B, 1] view of steps_, the chunk's next column
    std::optional<DeviceGraph> graph_;
    std::mt19937_64 engine_;
    std::vector<std::pair<double, std::int64_t>> scratch_;
};

std::vector<std::vector<std::int64_t>> GPT::generate(
    const std::vector<std::vector<std::int64_t>>& prompts, const GenerationConfig& options) {
    detail::check_generation(options, config_.vocab_size);
    if (prompts.empty()) {
        throw ValueError("generate: no prompts");
    }
    for (std::size_t r = 0; r < prompts.size(); ++r) {
        if (prompts[r].empty()) {
            throw ValueError("generate: prompt " + std::to_string(r) + " is empty");
        }
        for (const std::int64_t token : prompts[r]) {
            if (token < 0 || token >= config_.vocab_size) {
                throw IndexError("generate: prompt " + std::to_string(r) + " holds token " +
                                 std::to_string(token) + ", outside the vocabulary of " +
                                 std::to_string(config_.vocab_size));
            }
        }
    }
    const NoGradGuard guard;
    const bool was_training = is_training();
    eval();  // generation never drops out
    try {
        auto result = Decoder(*this, prompts, options).run();
        train(was_training);
        return result;
    } catch (...) {
        train(was_training);
        throw;
    }
}

std::vector<std::int64_t> GPT::generate(const std::vector<std::int64_t>& prompt,
                                        std::int64_t new_tokens, double temperature) {
    if (prompt.empty()) {
        throw ValueError("generate: the prompt is empty");
    }
    if (new_tokens < 0) {
        throw ValueError("generate: new_tokens must be non-negative, got " +
                         std::to_string(new_tokens));
    }
    GenerationConfig options;
    options.max_new_tokens = new_tokens;
    options.temperature = temperature;
    std::vector<std::int64_t> tokens = prompt;
    const std::vector<std::int64_t> produced = generate({prompt}, options)[0];
    tokens.insert(tokens.end(), produced.begin(), produced.end());
    return tokens;
}

}  // namespace kael::nn

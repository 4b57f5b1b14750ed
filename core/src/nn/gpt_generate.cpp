// GPT::generate: an eager prefill of the prompt, then greedy steps that, where the device can
// record (kael::DeviceGraph), are one recorded step replayed per token: a decoding step of a
// small model is ~150 kernels of a few microseconds each, so launching them one by one from the
// host, not the GPU, would set the pace.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>

#include "kael/autograd.h"
#include "kael/device_graph.h"
#include "kael/gpt.h"
#include "kael/ops_more.h"
#include "nn_internal.h"

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

std::int64_t GPT::decode_recorded(KVCache& cache, Tensor& step, std::int64_t new_tokens,
                                  std::vector<Tensor>& pending, Tensor& largest_magnitude) {
    const std::int64_t past = cache.length();
    const std::int64_t count = std::min(new_tokens, config_.block_size - past);
    // One replay is no faster than one eager step, and a batch needs per-row positions.
    if (count < 2 || cache.keys.empty() || step.size(0) != 1 || !largest_magnitude.defined() ||
        !record_decoding(step.device())) {
        return 0;
    }
    std::optional<KVCache> made = fixed_capacity(cache);
    if (!made || made->keys.size() != blocks_.size() || made->keys[0].size(2) < past + count) {
        return 0;
    }
    KVCache& fixed = *made;
    const Device device = step.device();
    // Everything the recorded step reads or rewrites: made first, alive until it is done.
    Tensor token = step.reshape({1, 1}).clone();
    Tensor picked = zeros({fixed.keys[0].size(2)}, DType::I64, device);  // by position
    Tensor largest = largest_magnitude.clone();
    const Tensor one = full({1}, 1, DType::I64, device);
    const DeviceGraph graph = DeviceGraph::record(device, [&] {
        const Tensor logits = forward(token, &fixed).select(1, -1).select(0, 0);
        largest.copy_(maximum(largest, max(abs(logits))));
        const Tensor next = argmax(logits).reshape({1});
        scatter_add_(picked, 0, fixed.position, next);  // the slot was 0
        token.copy_(next.reshape({1, 1}));
        add_(fixed.position, one);
    });
    for (std::int64_t i = 0; i < count; ++i) {
        graph.replay();
    }
    pending.push_back(picked.slice(0, past, past + count));
    largest_magnitude = largest;
    for (std::size_t i = 0; i < cache.keys.size(); ++i) {  // the cache now holds past + count
        cache.keys[i] = fixed.keys[i].slice(2, 0, past + count);
        cache.values[i] = fixed.values[i].slice(2, 0, past + count);
    }
    step = token;
    return count;
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
    if (!(temperature >= 0 && std::isfinite(temperature))) {  // NaN fails too
        throw ValueError("generate: temperature must be finite and non-negative, got " +
                         detail::format_number(temperature));
    }
    const NoGradGuard guard;
    const Device device = token_embedding_->weight.device();  // follows Module::to
    std::vector<std::int64_t> tokens = prompt;
    KVCache cache;
    Tensor step = tensor(prompt, {1, static_cast<std::int64_t>(prompt.size())}, device);
    // Greedy tokens stay on the device, each feeding the next step, so the host never waits for
    // the GPU inside the loop; they (and the finiteness check) reach the host in one copy.
    std::vector<Tensor> pending;
    Tensor largest_magnitude;  // the largest |logit| so far; NaN once any logit was NaN
    const auto flush = [&] {
        if (largest_magnitude.defined() && !std::isfinite(largest_magnitude.item<double>())) {
            // Non-finite logits (NaN weights, say) would pick one fixed token forever.
            throw ValueError("generate: the model produced non-finite logits");
        }
        if (!pending.empty()) {
            const std::vector<std::int64_t> picked = cat(pending, 0).to_vector<std::int64_t>();
            tokens.insert(tokens.end(), picked.begin(), picked.end());
            pending.clear();
        }
    };
    for (std::int64_t i = 0; i < new_tokens; ++i) {
        if (cache.length() + step.size(1) > config_.block_size) {
            // Context full: restart the cache from the last block_size - 1 tokens (at least one).
            flush();
            cache = KVCache();
            const auto keep = std::min<std::size_t>(
                tokens.size(), std::max<std::int64_t>(config_.block_size - 1, 1));
            const std::vector<std::int64_t> window(tokens.end() - static_cast<std::ptrdiff_t>(keep),
                                                   tokens.end());
            step = tensor(window, {1, static_cast<std::int64_t>(keep)}, device);
        }
        const Tensor logits = forward(step, &cache).select(1, -1).select(0, 0);
        const Tensor magnitude = max(abs(logits));
        largest_magnitude =
            largest_magnitude.defined() ? maximum(largest_magnitude, magnitude) : magnitude;
        if (temperature == 0) {
            step = argmax(logits).reshape({1, 1});
            pending.push_back(step.reshape({1}));
            i += decode_recorded(cache, step, new_tokens - i - 1, pending, largest_magnitude);
            continue;
        }
        flush();
        const std::vector<double> probabilities =
            softmax(logits / temperature, 0).to_vector<double>();
        double draw = rand({1}, DType::F64).item<double>();
        std::int64_t next = 0;
        for (std::size_t token = 0; token < probabilities.size(); ++token) {
            draw -= probabilities[token];
            next = static_cast<std::int64_t>(token);
            if (draw <= 0) {
                break;
            }
        }
        tokens.push_back(next);
        step = tensor(std::vector<std::int64_t>{next}, {1, 1}, device);
    }
    flush();
    return tokens;
}

}  // namespace kael::nn

// Choosing the next token from one row of logits on the host: temperature, top-k, top-p, as
// transformers' logits warpers do in that order. The host draws, so a seed gives the same
// tokens on every device.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "gpt_sampling.h"
#include "nn_internal.h"

namespace kael::nn::detail {

void check_generation(const GenerationConfig& options, std::int64_t vocab_size) {
    if (options.max_new_tokens < 0) {
        throw ValueError("generate: max_new_tokens must be non-negative, got " +
                         std::to_string(options.max_new_tokens));
    }
    if (!(options.temperature >= 0 && std::isfinite(options.temperature))) {  // NaN fails too
        throw ValueError("generate: temperature must be finite and non-negative, got " +
                         format_number(options.temperature));
    }
    if (options.top_k < 0) {
        throw ValueError("generate: top_k must be non-negative (0: off), got " +
                         std::to_string(options.top_k));
    }
    if (!(options.top_p > 0 && options.top_p <= 1)) {
        throw ValueError("generate: top_p must be in (0, 1], got " + format_number(options.top_p));
    }
    if (options.eos_token_id && (*options.eos_token_id < 0 || *options.eos_token_id >= vocab_size)) {
        throw ValueError("generate: eos_token_id " + std::to_string(*options.eos_token_id) +
                         " is outside the vocabulary of " + std::to_string(vocab_size));
    }
}

std::int64_t sample_token(const float* logits, std::int64_t count, const GenerationConfig& options,
                          std::mt19937_64& engine, std::vector<std::pair<double, std::int64_t>>& scratch) {
    scratch.clear();
    double largest = -INFINITY;
    for (std::int64_t i = 0; i < count; ++i) {
        if (std::isnan(logits[i])) {
            throw ValueError("generate: the model produced non-finite logits");
        }
        const double scaled = static_cast<double>(logits[i]) / options.temperature;
        scratch.emplace_back(scaled, i);
        largest = std::max(largest, scaled);
    }
    if (!std::isfinite(largest)) {
        throw ValueError("generate: the model produced non-finite logits");
    }
    // Most likely first; ties by token id, so the order (and the draw) is the same everywhere.
    const auto more_likely = [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
    };
    std::size_t kept = scratch.size();
    if (options.top_k > 0 && static_cast<std::size_t>(options.top_k) < kept) {
        kept = static_cast<std::size_t>(options.top_k);
        std::partial_sort(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(kept),
                          scratch.end(), more_likely);
    } else if (options.top_p < 1) {
        std::sort(scratch.begin(), scratch.end(), more_likely);
    }
    scratch.resize(kept);
    double total = 0;
    for (auto& [weight, token] : scratch) {
        weight = std::exp(weight - largest);
        total += weight;
    }
    if (options.top_p < 1) {  // the fewest most likely tokens reaching top_p (at least one)
        double mass = 0;
        std::size_t nucleus = 0;
        while (nucleus < scratch.size() && mass < options.top_p * total) {
            mass += scratch[nucleus++].first;
        }
        scratch.resize(std::max<std::size_t>(nucleus, 1));
        total = mass > 0 ? mass : scratch[0].first;
    }
    // 53 random bits as a double in [0, total).
    const double draw = static_cast<double>(engine() >> 11) * 0x1.0p-53 * total;
    double sum = 0;
    for (const auto& [weight, token] : scratch) {
        sum += weight;
        if (draw < sum) {
            return token;
        }
    }
    return scratch.back().second;  // rounding left the draw at the very top
}

}  // namespace kael::nn::detail

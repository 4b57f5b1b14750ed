#pragma once
// GPT::generate's checks and its host-side sampling (gpt_sampling.cpp; not installed).
#include <random>
#include <utility>
#include <vector>

#include "kael/gpt.h"

namespace kael::nn::detail {

// ValueError naming generate and the field for options no decoding can honour.
void check_generation(const GenerationConfig& options, std::int64_t vocab_size);

// A token drawn from logits[0, count) under options' temperature (> 0), top_k and top_p;
// ValueError when the logits are NaN or all infinite. scratch is reused between calls.
[[nodiscard]] std::int64_t sample_token(const float* logits, std::int64_t count,
                                        const GenerationConfig& options, std::mt19937_64& engine,
                                        std::vector<std::pair<double, std::int64_t>>& scratch);

}  // namespace kael::nn::detail

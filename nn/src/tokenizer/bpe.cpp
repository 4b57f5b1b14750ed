// BPE of one pre-tokenized word: start from its bytes, merge the pair of lowest rank everywhere
// it occurs (left to right), repeat until no pair has a rank. This is encoder.py's bpe(); the JS
// encoder keys ranks by "left,right" text, whose collisions (11 in GPT-2's merges) give the same
// tokens (see the report of the tokenizer branch), so ranks are keyed by the pair itself here.
#include <limits>

#include "tokenizer_internal.h"

namespace kael::tokenizer_detail {

namespace {

// Bounds the cache's memory on endless distinct input; long words are rare and not cached.
constexpr std::size_t kCacheEntries = 1 << 16;
constexpr std::size_t kLongestCachedWord = 64;

}  // namespace

std::vector<TokenId> BytePairEncoder::merge(std::string_view word) const {
    std::vector<TokenId> symbols;
    symbols.reserve(word.size());
    for (const char byte : word) {
        symbols.push_back(vocabulary_.byte_ids[static_cast<unsigned char>(byte)]);
    }
    while (symbols.size() > 1) {
        std::int32_t best_rank = std::numeric_limits<std::int32_t>::max();
        const Merge* best = nullptr;
        TokenId left = 0;
        TokenId right = 0;
        for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
            const auto found = vocabulary_.merges.find(pair_key(symbols[i], symbols[i + 1]));
            if (found != vocabulary_.merges.end() && found->second.rank < best_rank) {
                best_rank = found->second.rank;
                best = &found->second;
                left = symbols[i];
                right = symbols[i + 1];
            }
        }
        if (best == nullptr) break;
        std::size_t kept = 0;
        for (std::size_t i = 0; i < symbols.size(); ++kept) {
            if (i + 1 < symbols.size() && symbols[i] == left && symbols[i + 1] == right) {
                symbols[kept] = best->merged;
                i += 2;
            } else {
                symbols[kept] = symbols[i];
                i += 1;
            }
        }
        symbols.resize(kept);
    }
    return symbols;
}

void BytePairEncoder::encode_word(std::string_view word, std::vector<std::int64_t>& out) const {
    const bool cacheable = word.size() <= kLongestCachedWord;
    if (cacheable) {
        const std::lock_guard lock(cache_mutex_);
        if (const auto found = cache_.find(std::string(word)); found != cache_.end()) {
            out.insert(out.end(), found->second.begin(), found->second.end());
            return;
        }
    }
    std::vector<TokenId> ids = merge(word);
    out.insert(out.end(), ids.begin(), ids.end());
    if (cacheable) {
        const std::lock_guard lock(cache_mutex_);
        if (cache_.size() >= kCacheEntries) cache_.clear();
        cache_.emplace(word, std::move(ids));
    }
}

}  // namespace kael::tokenizer_detail

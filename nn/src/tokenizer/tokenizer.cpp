// GPT2Tokenizer and TokenTextStream: special tokens, ids to bytes, and the parts put together.
#include <filesystem>
#include "kael/tokenizer.h"

#include "kael/error.h"
#include "tokenizer_internal.h"

namespace kael {

using tokenizer_detail::TokenizerData;

namespace {

constexpr std::string_view kEndOfText = "<|endoftext|>";

const std::string& bytes_of(const tokenizer_detail::Vocabulary& vocabulary, std::int64_t id) {
    if (id < 0 || id >= static_cast<std::int64_t>(vocabulary.token_bytes.size()) ||
        !vocabulary.present[static_cast<std::size_t>(id)]) {
        throw ValueError("GPT2Tokenizer: token id " + std::to_string(id) +
                         " is not in the vocabulary (ids are 0 to " +
                         std::to_string(vocabulary.token_bytes.size() - 1) + ", " +
                         vocabulary.source + ")");
    }
    return vocabulary.token_bytes[static_cast<std::size_t>(id)];
}

}  // namespace

GPT2Tokenizer::GPT2Tokenizer(std::shared_ptr<const TokenizerData> data) : data_(std::move(data)) {}

GPT2Tokenizer GPT2Tokenizer::from_files(const std::string& vocab_path,
                                        const std::string& merges_path) {
    return GPT2Tokenizer(std::make_shared<const TokenizerData>(
        tokenizer_detail::read_vocabulary(vocab_path, merges_path)));
}

GPT2Tokenizer GPT2Tokenizer::from_folder(const std::string& folder) {
    if (folder.empty()) return installed();
    if (!std::filesystem::is_directory(folder)) {  // a typo must not hide behind the installed copy
        throw ValueError("GPT2Tokenizer: '" + folder + "' is not a folder");
    }
    const std::optional<tokenizer_detail::VocabularyFiles> files = tokenizer_detail::files_in(folder);
    // A checkpoint folder without vocabulary files (kael's own, a bare save_pretrained) uses
    // GPT-2's, installed with kael.
    return files ? from_files(files->vocab, files->merges) : installed();
}

GPT2Tokenizer GPT2Tokenizer::installed() {
    const tokenizer_detail::VocabularyFiles files = tokenizer_detail::installed_files();
    return from_files(files.vocab, files.merges);
}

std::vector<std::int64_t> GPT2Tokenizer::encode(std::string_view text, bool allow_special) const {
    const std::string valid = tokenizer_detail::to_valid_utf8(text);
    std::vector<std::int64_t> ids;
    ids.reserve(valid.size() / 3 + 1);
    const auto encode_words = [&](std::string_view piece) {
        data_->pretokenizer.split(piece, [&](std::string_view word) {
            data_->bpe.encode_word(word, ids);
        });
    };
    const std::optional<tokenizer_detail::TokenId> eos = data_->vocabulary.eos;
    std::string_view rest = valid;
    if (allow_special && eos) {
        // As Hugging Face's added tokens: split out first, the text around them encoded alone.
        for (std::size_t found; (found = rest.find(kEndOfText)) != std::string_view::npos;) {
            encode_words(rest.substr(0, found));
            ids.push_back(*eos);
            rest.remove_prefix(found + kEndOfText.size());
        }
    }
    encode_words(rest);
    return ids;
}

std::string GPT2Tokenizer::decode(const std::vector<std::int64_t>& ids) const {
    std::string bytes;
    for (const std::int64_t id : ids) bytes += bytes_of(data_->vocabulary, id);
    return tokenizer_detail::to_valid_utf8(bytes);
}

std::string GPT2Tokenizer::token_bytes(std::int64_t id) const {
    return bytes_of(data_->vocabulary, id);
}

std::int64_t GPT2Tokenizer::vocab_size() const {
    return static_cast<std::int64_t>(data_->vocabulary.token_bytes.size());
}

std::int64_t GPT2Tokenizer::eos_token_id() const {
    if (!data_->vocabulary.eos) {
        throw ValueError("GPT2Tokenizer: the vocabulary " + data_->vocabulary.source + " has no " +
                         std::string(kEndOfText) + " token");
    }
    return *data_->vocabulary.eos;
}

std::string GPT2Tokenizer::source() const { return data_->vocabulary.source; }

TokenTextStream::TokenTextStream(const GPT2Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

std::string TokenTextStream::push(std::int64_t id) {
    pending_ += tokenizer_.token_bytes(id);
    std::size_t incomplete = 0;
    std::string text = tokenizer_detail::to_valid_utf8(pending_, &incomplete);
    pending_.erase(0, pending_.size() - incomplete);
    return text;
}

std::string TokenTextStream::finish() {
    std::string text = tokenizer_detail::to_valid_utf8(pending_);
    pending_.clear();
    return text;
}

}  // namespace kael

// Reading encoder.json / vocab.json (token -> id) and vocab.bpe / merges.txt (ranked merges).
#include <algorithm>
#include <cerrno>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kael/error.h"
#include "tokenizer_internal.h"

namespace kael::tokenizer_detail {

namespace {

constexpr std::string_view kEndOfText = "<|endoftext|>";
// Far beyond any released vocabulary; keeps a corrupt id from sizing a huge table.
constexpr std::int64_t kMaxVocabulary = std::int64_t{1} << 24;

[[noreturn]] void fail(const std::string& path, std::size_t line, const std::string& what) {
    throw ValueError("GPT2Tokenizer: " + path + (line > 0 ? ":" + std::to_string(line) : "") +
                     ": " + what);
}

std::string read_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    if (!file) throw OSError(errno != 0 ? errno : ENOENT, "GPT2Tokenizer: cannot read", path);
    std::ostringstream text;
    text << file.rdbuf();
    if (file.bad()) throw OSError(errno != 0 ? errno : EIO, "GPT2Tokenizer: reading failed", path);
    return text.str();
}

// A token's bytes: its code points through GPT-2's byte table. A token with other code points
// (an added token written as plain text) stands for its own UTF-8.
std::string bytes_of_token(const std::string& text) {
    std::string bytes;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::optional<unsigned char> byte = code_point_to_byte(next_code_point(text, at));
        if (!byte) return text;
        bytes += static_cast<char>(*byte);
    }
    return bytes;
}

std::size_t line_of_offset(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
}

using TokenIndex = std::unordered_map<std::string, TokenId>;

TokenIndex read_tokens(const std::string& path, Vocabulary& vocabulary) {
    const std::string text = read_file(path);
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& error) {
        fail(path, line_of_offset(text, error.byte), "not valid JSON (" + std::string(error.what()) + ")");
    }
    if (!json.is_object() || json.empty()) {
        fail(path, 0, "expected a JSON object of token strings to ids");
    }
    TokenIndex index;
    std::int64_t size = 0;
    for (const auto& [token, id] : json.items()) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
            id.get<std::int64_t>() >= kMaxVocabulary) {
            fail(path, 0, "token '" + token + "' has id " + id.dump() +
                              ", not an integer in [0, " + std::to_string(kMaxVocabulary) + ")");
        }
        size = std::max(size, id.get<std::int64_t>() + 1);
        index.emplace(token, static_cast<TokenId>(id.get<std::int64_t>()));
    }
    vocabulary.token_bytes.assign(static_cast<std::size_t>(size), {});
    vocabulary.present.assign(static_cast<std::size_t>(size), false);
    for (const auto& [token, id] : index) {
        const auto slot = static_cast<std::size_t>(id);
        if (vocabulary.present[slot]) fail(path, 0, "id " + std::to_string(id) + " is given twice");
        vocabulary.present[slot] = true;
        vocabulary.token_bytes[slot] = bytes_of_token(token);
    }
    for (unsigned byte = 0; byte < 256; ++byte) {
        std::string token;
        append_utf8(token, byte_to_code_point(static_cast<unsigned char>(byte)));
        const auto found = index.find(token);
        if (found == index.end()) {
            fail(path, 0, "no token for byte " + std::to_string(byte) + " ('" + token +
                              "'); a byte-level vocabulary has all 256");
        }
        vocabulary.byte_ids[byte] = found->second;
    }
    if (const auto found = index.find(std::string(kEndOfText)); found != index.end()) {
        vocabulary.eos = found->second;
    }
    return index;
}

// Whitespace-separated fields of one line (JS's split on \s+ for these ASCII-only separators).
std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> fields;
    std::size_t at = 0;
    while (at < line.size()) {
        const std::size_t start = line.find_first_not_of(" \t\r\v\f", at);
        if (start == std::string_view::npos) break;
        const std::size_t end = std::min(line.find_first_of(" \t\r\v\f", start), line.size());
        fields.push_back(line.substr(start, end - start));
        at = end;
    }
    return fields;
}

TokenId id_in(const TokenIndex& index, std::string_view token, const std::string& path,
              std::size_t line, const std::string& vocab_path) {
    const auto found = index.find(std::string(token));
    if (found == index.end()) {
        fail(path, line, "token '" + std::string(token) + "' is not in the vocabulary " + vocab_path);
    }
    return found->second;
}

// GPT-2's vocab.bpe and Hugging Face's merges.txt: a "#version" line, then one "left right"
// pair per line, most frequent first. Blank lines are skipped.
void read_merges(const std::string& path, const std::string& vocab_path, const TokenIndex& index,
                 Vocabulary& vocabulary) {
    const std::string text = read_file(path);
    std::size_t line_number = 0;
    std::int32_t rank = 0;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string_view line = std::string_view(text).substr(at, end - at);
        at = end + 1;
        ++line_number;
        if (line_number == 1 && line.starts_with("#version")) continue;
        const std::vector<std::string_view> fields = fields_of(line);
        if (fields.empty()) continue;
        if (fields.size() != 2) {
            fail(path, line_number, "expected two tokens separated by a space, got '" +
                                        std::string(line) + "'");
        }
        const TokenId left = id_in(index, fields[0], path, line_number, vocab_path);
        const TokenId right = id_in(index, fields[1], path, line_number, vocab_path);
        const std::string joined = std::string(fields[0]) + std::string(fields[1]);
        const TokenId merged = id_in(index, joined, path, line_number, vocab_path);
        // A repeated pair takes its later rank, as the Python and JS encoders' dicts do.
        vocabulary.merges[pair_key(left, right)] = Merge{rank++, merged};
    }
}

}  // namespace

Vocabulary read_vocabulary(const std::string& vocab_path, const std::string& merges_path) {
    Vocabulary vocabulary;
    const TokenIndex index = read_tokens(vocab_path, vocabulary);
    read_merges(merges_path, vocab_path, index, vocabulary);
    vocabulary.source = vocab_path + " and " + merges_path;
    return vocabulary;
}

}  // namespace kael::tokenizer_detail

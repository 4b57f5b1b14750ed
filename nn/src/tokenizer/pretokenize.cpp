// GPT-2's pre-tokenizer regex through PCRE2, compiled once, JIT-compiled where PCRE2 can.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <string>

#include "kael/error.h"
#include "tokenizer_internal.h"

namespace kael::tokenizer_detail {

namespace {

// JavaScript's \s (ECMA-262 WhiteSpace and LineTerminator), which the reference encoder's /u
// regex uses. PCRE2 10.42's \s under UCP differs (it takes U+0085 and U+180E, not U+FEFF), so
// the class is spelled out.
#define KAEL_JS_SPACE                                                                    \
    "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}" \
    "\\x{205F}\\x{3000}\\x{FEFF}"

// encoder.py's 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
constexpr const char* kPattern =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" KAEL_JS_SPACE "\\p{L}\\p{N}]+"
    "|[" KAEL_JS_SPACE "]+(?![^" KAEL_JS_SPACE "])|[" KAEL_JS_SPACE "]+";

std::string pcre2_message(int code) {
    PCRE2_UCHAR buffer[256];
    if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return "error " + std::to_string(code);
    return reinterpret_cast<const char*>(buffer);
}

}  // namespace

struct Pretokenizer::Pattern {
    pcre2_code* code = nullptr;
    ~Pattern() { pcre2_code_free(code); }
};

Pretokenizer::Pretokenizer() : pattern_(std::make_unique<Pattern>()) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    pattern_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (pattern_->code == nullptr) {
        throw Error("GPT2Tokenizer: PCRE2 rejects the pre-tokenizer pattern at " +
                    std::to_string(offset) + ": " + pcre2_message(error));
    }
    // Without JIT (a PCRE2 built without it, or a system that forbids executable memory) the
    // interpreter gives the same matches, more slowly.
    (void)pcre2_jit_compile(pattern_->code, PCRE2_JIT_COMPLETE);
}

Pretokenizer::~Pretokenizer() = default;

void Pretokenizer::split(std::string_view valid_utf8,
                         const std::function<void(std::string_view)>& word) const {
    std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
        pcre2_match_data_create_from_pattern(pattern_->code, nullptr), &pcre2_match_data_free);
    if (!match) throw OutOfMemoryError("GPT2Tokenizer: no memory for PCRE2 match data");
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(valid_utf8.data());
    PCRE2_SIZE at = 0;
    while (at < valid_utf8.size()) {
        // The text was made valid UTF-8 once; checking it again at every offset would be O(n^2).
        int found = pcre2_match(pattern_->code, subject, valid_utf8.size(), at,
                                PCRE2_NO_UTF_CHECK, match.get(), nullptr);
        if (found == PCRE2_ERROR_JIT_STACKLIMIT) {  // a very long run: the interpreter's heap
            found = pcre2_match(pattern_->code, subject, valid_utf8.size(), at,
                                PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, match.get(), nullptr);
        }
        if (found == PCRE2_ERROR_NOMATCH) break;  // cannot happen: every character matches
        if (found < 0) {
            throw Error("GPT2Tokenizer: PCRE2 failed at byte " + std::to_string(at) + ": " +
                        pcre2_message(found));
        }
        const PCRE2_SIZE* range = pcre2_get_ovector_pointer(match.get());
        if (range[1] <= at) break;  // no empty matches in this pattern; guards the loop anyway
        word(valid_utf8.substr(range[0], range[1] - range[0]));
        at = range[1];
    }
}

}  // namespace kael::tokenizer_detail

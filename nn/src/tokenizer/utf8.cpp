// GPT-2's byte<->unicode table and the UTF-8 handling around it.
#include <algorithm>
#include <array>

#include "tokenizer_internal.h"

namespace kael::tokenizer_detail {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// bytes_to_unicode() of GPT-2's encoder.py: printable Latin-1 bytes stand for themselves, the
// other 68 bytes take the code points from 256 on, in byte order.
constexpr std::array<char32_t, 256> make_byte_table() {
    std::array<char32_t, 256> table{};
    char32_t next = 256;
    for (unsigned byte = 0; byte < 256; ++byte) {
        const bool printable = (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) ||
                               (byte >= 0xAE && byte <= 0xFF);
        table[byte] = printable ? static_cast<char32_t>(byte) : next++;
    }
    return table;
}
constexpr std::array<char32_t, 256> kByteToCodePoint = make_byte_table();

// The WHATWG decoder's rule for a lead byte: how many continuation bytes follow and the range
// the first of them must be in (which rules out overlong forms, surrogates and > U+10FFFF).
struct LeadByte {
    int continuation = -1;  // -1: not a lead byte
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
};
LeadByte lead_byte(unsigned char byte) {
    if (byte >= 0xC2 && byte <= 0xDF) return {1};
    if (byte == 0xE0) return {2, 0xA0};
    if (byte == 0xED) return {2, 0x80, 0x9F};
    if (byte >= 0xE1 && byte <= 0xEF) return {2};
    if (byte == 0xF0) return {3, 0x90};
    if (byte >= 0xF1 && byte <= 0xF3) return {3};
    if (byte == 0xF4) return {3, 0x80, 0x8F};
    return {};
}

}  // namespace

char32_t byte_to_code_point(unsigned char byte) { return kByteToCodePoint[byte]; }

std::optional<unsigned char> code_point_to_byte(char32_t code_point) {
    if (code_point < 256 && kByteToCodePoint[code_point] == code_point) {
        return static_cast<unsigned char>(code_point);
    }
    if (code_point >= 256 && code_point < 256 + 68) {
        for (unsigned byte = 0; byte < 256; ++byte) {
            if (kByteToCodePoint[byte] == code_point) return static_cast<unsigned char>(byte);
        }
    }
    return std::nullopt;
}

void append_utf8(std::string& out, char32_t code_point) {
    if (code_point < 0x80) {
        out += static_cast<char>(code_point);
    } else if (code_point < 0x800) {
        out += static_cast<char>(0xC0 | (code_point >> 6));
        out += static_cast<char>(0x80 | (code_point & 0x3F));
    } else if (code_point < 0x10000) {
        out += static_cast<char>(0xE0 | (code_point >> 12));
        out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code_point & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (code_point >> 18));
        out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code_point & 0x3F));
    }
}

// One U+FFFD per maximal invalid subpart, as https://encoding.spec.whatwg.org/#utf-8-decoder.
std::string to_valid_utf8(std::string_view bytes, std::size_t* incomplete_tail) {
    std::string out;
    out.reserve(bytes.size());
    if (incomplete_tail != nullptr) *incomplete_tail = 0;
    std::size_t at = 0;
    while (at < bytes.size()) {
        const auto byte = static_cast<unsigned char>(bytes[at]);
        if (byte < 0x80) {
            out += static_cast<char>(byte);
            ++at;
            continue;
        }
        const LeadByte lead = lead_byte(byte);
        std::size_t end = at + 1;
        bool complete = lead.continuation > 0;
        for (int k = 0; complete && k < lead.continuation; ++k, ++end) {
            if (end == bytes.size()) {  // truncated at the end of the input
                if (incomplete_tail != nullptr) {
                    *incomplete_tail = bytes.size() - at;
                    return out;
                }
                complete = false;
                break;
            }
            const auto next = static_cast<unsigned char>(bytes[end]);
            if (next < (k == 0 ? lead.low : 0x80) || next > (k == 0 ? lead.high : 0xBF)) {
                complete = false;
                break;
            }
        }
        if (complete) {
            out.append(bytes.substr(at, end - at));
        } else {
            append_utf8(out, kReplacement);
        }
        at = std::max(end, at + 1);
    }
    return out;
}

char32_t next_code_point(std::string_view text, std::size_t& at) {
    const auto byte = static_cast<unsigned char>(text[at++]);
    if (byte < 0x80) return byte;
    const int continuation = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : 1;
    char32_t code_point = byte & (0x3F >> continuation);
    for (int k = 0; k < continuation; ++k) {
        code_point = (code_point << 6) | (static_cast<unsigned char>(text[at++]) & 0x3F);
    }
    return code_point;
}

}  // namespace kael::tokenizer_detail

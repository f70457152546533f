#pragma once
// Strict UTF-8 per Unicode §3.9 table 3-7: overlong forms, surrogates and values past U+10FFFF
// are ill-formed. Ill-formed input is cut into "maximal subparts" (Unicode's recommended
// practice), each of which a decoder shows as one U+FFFD.

#include <cstdint>
#include <string>
#include <string_view>

namespace ember::tokenizer {

inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

struct Utf8Step {
    enum Status : uint8_t { Ok, Invalid, Truncated };
    uint32_t cp;    // the code point when Ok, else U+FFFD
    uint32_t len;   // bytes consumed: the character, the ill-formed subpart, or what was left
    Status status;  // Truncated: the text ends inside a sequence that could still complete
};

// `pos` must be < text.size().
Utf8Step utf8_next(std::string_view text, size_t pos);

void utf8_append(std::string& out, uint32_t cp);

}  // namespace ember::tokenizer

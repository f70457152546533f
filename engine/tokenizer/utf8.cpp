#include "tokenizer/utf8.h"

namespace ember::tokenizer {

Utf8Step utf8_next(std::string_view text, size_t pos) {
    const auto b0 = static_cast<uint8_t>(text[pos]);
    if (b0 < 0x80) return {b0, 1, Utf8Step::Ok};

    // The allowed range of the second byte depends on the lead byte; that is where overlongs,
    // surrogates and out-of-range values are excluded.
    uint32_t need = 0;
    uint32_t cp = 0;
    uint8_t lo = 0x80;
    uint8_t hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1;
        cp = b0 & 0x1F;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2;
        cp = b0 & 0x0F;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3;
        cp = b0 & 0x07;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;
    } else {
        return {0xFFFD, 1, Utf8Step::Invalid};
    }

    size_t i = pos + 1;
    for (uint32_t k = 0; k < need; ++k, ++i) {
        if (i >= text.size()) return {0xFFFD, static_cast<uint32_t>(i - pos), Utf8Step::Truncated};
        const auto b = static_cast<uint8_t>(text[i]);
        if (b < lo || b > hi) return {0xFFFD, static_cast<uint32_t>(i - pos), Utf8Step::Invalid};
        cp = (cp << 6) | (b & 0x3F);
        lo = 0x80;
        hi = 0xBF;
    }
    return {cp, need + 1, Utf8Step::Ok};
}

void utf8_append(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace ember::tokenizer

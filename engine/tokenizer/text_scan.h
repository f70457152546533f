#pragma once
// Stepping through UTF-8 text by character class, for the hand-written pre-tokenizers. An
// ill-formed UTF-8 subpart counts as one Other character, so bytes are never dropped.

#include <cstddef>
#include <string_view>

#include "tokenizer/char_class.h"
#include "tokenizer/utf8.h"

namespace ember::tokenizer {

struct ScannedChar {
    size_t len;
    CharClass cls;
};

inline ScannedChar char_at(std::string_view text, size_t pos) {
    const Utf8Step step = utf8_next(text, pos);
    if (step.status != Utf8Step::Ok) return {step.len, CharClass::Other};
    return {step.len, char_class(step.cp)};
}

// End of the run of `cls` characters that starts at pos.
inline size_t run_end(std::string_view text, size_t pos, CharClass cls) {
    while (pos < text.size()) {
        const ScannedChar c = char_at(text, pos);
        if (c.cls != cls) break;
        pos += c.len;
    }
    return pos;
}

}  // namespace ember::tokenizer

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

inline bool is_newline(char c) { return c == '\r' || c == '\n'; }

// \s*[\r\n]+|\s+(?!\S)|\s+ at pos, a whitespace character: the tail of Llama 3's pattern and
// the patterns after it.
inline size_t whitespace_chunk_end(std::string_view text, size_t pos) {
    // \s*[\r\n]+ ends after the run's last newline, if it has one.
    size_t end = pos, last_start = pos, after_newline = 0;
    while (end < text.size()) {
        const ScannedChar w = char_at(text, end);
        if (w.cls != CharClass::Space) break;
        last_start = end;
        end += w.len;
        if (is_newline(text[last_start])) after_newline = end;
    }
    if (after_newline) return after_newline;
    // \s+(?!\S): a run followed by non-space leaves its last character to the next chunk;
    // a single one falls through to \s+.
    if (end == text.size()) return end;
    return last_start > pos ? last_start : end;
}

}  // namespace ember::tokenizer

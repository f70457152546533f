#include "tokenizer/gpt2_pretokenizer.h"

#include "tokenizer/text_scan.h"

namespace ember::tokenizer {

namespace {

// The contraction alternatives come first in the pattern and are ASCII, case-sensitive.
size_t contraction_end(std::string_view text, size_t pos) {
    if (text[pos] != '\'' || pos + 1 >= text.size()) return pos;
    const char a = text[pos + 1];
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
    if (pos + 2 >= text.size()) return pos;
    const char b = text[pos + 2];
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return pos + 3;
    return pos;
}

}  // namespace

size_t gpt2_chunk_end(std::string_view text, size_t pos) {
    if (const size_t end = contraction_end(text, pos); end != pos) return end;

    // ` ?X+` for X in {L, N, other}: which alternative matches is decided by the character
    // after the optional space, and the run is greedy.
    if (text[pos] == ' ' && pos + 1 < text.size()) {
        const ScannedChar next = char_at(text, pos + 1);
        if (next.cls != CharClass::Space) return run_end(text, pos + 1, next.cls);
    }
    const ScannedChar first = char_at(text, pos);
    if (first.cls != CharClass::Space) return run_end(text, pos, first.cls);

    // Whitespace run. `\s+(?!\S)` backs off one character when the run is followed by
    // non-space, leaving that last space to prefix the next word; a single whitespace
    // character before non-space falls through to plain `\s+`.
    size_t end = pos;
    size_t last = pos;
    while (end < text.size()) {
        const ScannedChar c = char_at(text, end);
        if (c.cls != CharClass::Space) break;
        last = end;
        end += c.len;
    }
    if (end == text.size()) return end;
    return last > pos ? last : end;
}

}  // namespace ember::tokenizer

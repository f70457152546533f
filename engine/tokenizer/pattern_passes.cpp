#include "tokenizer/pattern_passes.h"

#include <array>
#include <span>

#include "tokenizer/char_class.h"
#include "tokenizer/gpt2_pretokenizer.h"
#include "tokenizer/text_scan.h"
#include "tokenizer/utf8.h"

namespace ember::tokenizer {
namespace {

struct Char {
    size_t len;
    uint32_t cp;
    Category category;
};

// As llama.cpp reads text: an ill-formed subpart is one U+FFFD, a symbol.
Char read_char(std::string_view s, size_t pos) {
    const Utf8Step step = utf8_next(s, pos);
    if (step.status != Utf8Step::Ok) return {step.len, 0xFFFD, Category::Symbol};
    return {step.len, step.cp, char_category(step.cp)};
}

struct Range {
    uint32_t first;
    uint32_t last;
};

// A character class written as code point ranges. llama.cpp hands its patterns every non-ASCII
// white-space character as \v, so none of those is ever inside a range.
bool in_ranges(const Char& c, std::span<const Range> ranges) {
    if (c.category == Category::Space && c.cp >= 0x80) return false;
    for (const Range& r : ranges)
        if (c.cp >= r.first && c.cp <= r.last) return true;
    return false;
}

// DeepSeek LLM's letters, as its pattern lists them (Latin, Greek, Cyrillic, Armenian, Georgian,
// Cherokee, Glagolitic, Coptic, fullwidth and a few more; no CJK).
constexpr Range kDeepseekLetters[] = {
    {0x41, 0x5A},       {0x61, 0x7A},       {0xB5, 0xB5},       {0xC0, 0xD6},       {0xD8, 0xF6},
    {0xF8, 0x1BA},      {0x1BC, 0x1BF},     {0x1C4, 0x293},     {0x295, 0x2AF},     {0x370, 0x373},
    {0x376, 0x377},     {0x37B, 0x37D},     {0x37F, 0x37F},     {0x386, 0x386},     {0x388, 0x38A},
    {0x38C, 0x38C},     {0x38E, 0x3A1},     {0x3A3, 0x3F5},     {0x3F7, 0x481},     {0x48A, 0x52F},
    {0x531, 0x556},     {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},   {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},   {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},   {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B},   {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},   {0x1FD6, 0x1FDB},
    {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},   {0x2102, 0x2102},   {0x2107, 0x2107},
    {0x210A, 0x2113},   {0x2115, 0x2115},   {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},
    {0x2128, 0x2128},   {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},   {0x2C7E, 0x2CE4},
    {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},   {0xA680, 0xA69B},   {0xA722, 0xA76F},
    {0xA771, 0xA787},   {0xA78B, 0xA78E},   {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},
    {0xFF21, 0xFF3A},   {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};
// Its punctuation: printable ASCII but digits (letters included; they are cut out before),
// fullwidth forms, curly quotes, ideographic comma and full stop.
constexpr Range kDeepseekPunctuation[] = {{0x21, 0x2F},     {0x3A, 0x7E},     {0xFF01, 0xFF0F},
                                          {0xFF1A, 0xFF5E}, {0x2018, 0x201F}, {0x3000, 0x3002}};
// DeepSeek LLM's and Coder's CJK: Samaritan to the first ideograph, the ideographs, Hangul.
constexpr Range kDeepseekCjk[] = {{0x4E00, 0x9FA5}, {0x800, 0x4E00}, {0xAC00, 0xD7FF}};
// DeepSeek V3's: the ideographs, Hiragana, Katakana.
constexpr Range kDeepseekV3Cjk[] = {{0x4E00, 0x9FA5}, {0x3040, 0x309F}, {0x30A0, 0x30FF}};

bool is_space(const Char& c) { return c.category == Category::Space; }
bool is_letter(const Char& c) { return c.category == Category::Letter; }
bool is_number(const Char& c) { return c.category == Category::Number; }
bool is_punctuation(const Char& c) { return c.category == Category::Punctuation; }
bool is_letter_or_mark(const Char& c) { return is_letter(c) || c.category == Category::Mark; }
bool is_punctuation_or_symbol(const Char& c) { return is_punctuation(c) || c.category == Category::Symbol; }
bool is_ascii_letter(const Char& c) { return c.cp < 0x80 && (c.cp | 0x20) >= 'a' && (c.cp | 0x20) <= 'z'; }
bool is_ascii_digit(const Char& c) { return c.cp >= '0' && c.cp <= '9'; }
bool is_ascii_punctuation_or_symbol(const Char& c) {
    return (c.cp >= 0x21 && c.cp <= 0x2F) || (c.cp >= 0x3A && c.cp <= 0x40) || (c.cp >= 0x5B && c.cp <= 0x60) ||
           (c.cp >= 0x7B && c.cp <= 0x7E);
}
bool is_deepseek_letter(const Char& c) { return in_ranges(c, kDeepseekLetters); }
bool is_deepseek_punctuation(const Char& c) { return in_ranges(c, kDeepseekPunctuation); }
bool is_deepseek_cjk(const Char& c) { return in_ranges(c, kDeepseekCjk); }
bool is_deepseek_v3_cjk(const Char& c) { return in_ranges(c, kDeepseekV3Cjk); }
// Falcon's [\p{P}\$\+<=>\^~\|`]: punctuation and ASCII's symbols; llama.cpp's default rules'
// the same without the backtick.
bool is_default_punctuation(const Char& c) {
    if (is_punctuation(c)) return true;
    switch (c.cp) {
        case '$': case '+': case '<': case '=': case '>': case '^': case '~': case '|': return true;
        default: return false;
    }
}
bool is_falcon_punctuation(const Char& c) { return is_default_punctuation(c) || c.cp == '`'; }

using Is = bool (*)(const Char&);

// End of the run of `is` characters from pos (pos itself where none).
size_t run_end(std::string_view s, size_t pos, Is is, size_t max_chars = SIZE_MAX) {
    for (size_t n = 0; n < max_chars && pos < s.size(); ++n) {
        const Char c = read_char(s, pos);
        if (!is(c)) break;
        pos += c.len;
    }
    return pos;
}

// A pattern anchored at a position of a piece: the match's end, or `at` where it does not match
// (none of these patterns matches empty text).
using MatchAt = size_t (*)(std::string_view piece, size_t at);

template <Is X>
size_t run_of(std::string_view p, size_t at) { return run_end(p, at, X); }

// \s?X+
template <Is X>
size_t space_then_run_of(std::string_view p, size_t at) {
    const Char c = read_char(p, at);
    if (is_space(c) && at + c.len < p.size() && X(read_char(p, at + c.len))) return run_end(p, at + c.len, X);
    return run_end(p, at, X);
}

// [\r\n]
size_t one_newline(std::string_view p, size_t at) { return is_newline(p[at]) ? at + 1 : at; }

size_t one_number(std::string_view p, size_t at) { return run_end(p, at, is_number, 1); }
size_t up_to_three_numbers(std::string_view p, size_t at) { return run_end(p, at, is_number, 3); }

// [0-9][0-9][0-9]
size_t three_ascii_digits(std::string_view p, size_t at) {
    const size_t end = run_end(p, at, is_ascii_digit, 3);
    return end == at + 3 ? end : at;
}

// GPT-2's pattern without its last alternative, \s+: the single white-space character it would
// take is left between two matches, a piece of its own all the same.
size_t gpt2_words(std::string_view p, size_t at) { return gpt2_chunk_end(p, at); }

// DeepSeek V3's last pattern:
// [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
//  ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
size_t deepseek_v3_words(std::string_view p, size_t at) {
    const Char c = read_char(p, at);
    const size_t next = at + c.len;
    const bool has_next = next < p.size();
    const Char n = has_next ? read_char(p, next) : Char{0, 0, Category::Other};
    if (is_ascii_punctuation_or_symbol(c) && has_next && is_ascii_letter(n)) return run_end(p, next, is_ascii_letter);
    if (!is_newline(p[at]) && !is_letter(c) && !is_punctuation_or_symbol(c) && has_next && is_letter_or_mark(n))
        return run_end(p, next, is_letter_or_mark);
    if (is_letter_or_mark(c)) return run_end(p, at, is_letter_or_mark);
    const size_t marks = c.cp == ' ' && has_next && is_punctuation_or_symbol(n) ? next : at;
    if (const size_t end = run_end(p, marks, is_punctuation_or_symbol); end != marks) {
        size_t with_newlines = end;
        while (with_newlines < p.size() && is_newline(p[with_newlines])) ++with_newlines;
        return with_newlines;
    }
    return is_space(c) ? whitespace_chunk_end(p, at) : at;
}

// A pattern's next match in a piece, from `from` on; begin == end where there is none.
struct Found {
    size_t begin;
    size_t end;
};
using Find = Found (*)(std::string_view piece, size_t from);

template <MatchAt Match>
Found first_match(std::string_view p, size_t from) {
    for (size_t at = from; at < p.size(); at += read_char(p, at).len)
        if (const size_t end = Match(p, at); end > at) return {at, end};
    return {p.size(), p.size()};
}

// \s+$: the white space that ends the piece (found from the end: no scan of a long run per
// position).
Found trailing_space(std::string_view p, size_t from) {
    size_t start = SIZE_MAX;
    for (size_t at = from; at < p.size();) {
        const Char c = read_char(p, at);
        if (!is_space(c)) start = SIZE_MAX;
        else if (start == SIZE_MAX) start = at;
        at += c.len;
    }
    return start == SIZE_MAX ? Found{p.size(), p.size()} : Found{start, p.size()};
}

// llama.cpp's lists (llama-vocab.cpp), pattern by pattern.
constexpr std::array kDeepseekLlm{
    &first_match<one_newline>,
    &first_match<space_then_run_of<is_deepseek_letter>>,
    &first_match<space_then_run_of<is_deepseek_punctuation>>,
    &trailing_space,
    &first_match<run_of<is_deepseek_cjk>>,
    &first_match<run_of<is_number>>,
};
constexpr std::array kDeepseekCoder{
    &first_match<one_newline>,
    &first_match<space_then_run_of<is_letter>>,
    &first_match<space_then_run_of<is_punctuation>>,
    &first_match<run_of<is_deepseek_cjk>>,
    &first_match<one_number>,
};
constexpr std::array kDeepseekV3{
    &first_match<up_to_three_numbers>,
    &first_match<run_of<is_deepseek_v3_cjk>>,
    &first_match<deepseek_v3_words>,
};
constexpr std::array kFalcon{
    &first_match<run_of<is_falcon_punctuation>>,
    &first_match<gpt2_words>,
    &first_match<three_ascii_digits>,
};

constexpr std::array kDefault{
    &first_match<run_of<is_default_punctuation>>,
    &first_match<gpt2_words>,
    &first_match<run_of<is_number>>,
    &first_match<three_ascii_digits>,
};

std::span<const Find> passes(PreTokenizer pre) {
    switch (pre) {
        case PreTokenizer::DeepseekLlm: return kDeepseekLlm;
        case PreTokenizer::DeepseekCoder: return kDeepseekCoder;
        case PreTokenizer::DeepseekV3: return kDeepseekV3;
        case PreTokenizer::Falcon: return kFalcon;
        case PreTokenizer::Default: return kDefault;
        default: return {};
    }
}

}  // namespace

bool runs_in_passes(PreTokenizer pre) { return !passes(pre).empty(); }

void split_in_passes(PreTokenizer pre, std::string_view text, std::vector<size_t>& ends) {
    std::vector<size_t> pieces{text.size()}, next;  // each piece's end
    for (const Find find : passes(pre)) {
        next.clear();
        size_t begin = 0;
        for (const size_t end : pieces) {
            const std::string_view piece = text.substr(begin, end - begin);
            size_t done = 0;
            for (Found f = find(piece, 0); f.begin < f.end; f = find(piece, f.end)) {
                if (f.begin > done) next.push_back(begin + f.begin);  // the text before the match
                next.push_back(begin + f.end);
                done = f.end;
            }
            if (done < piece.size()) next.push_back(end);
            begin = end;
        }
        pieces.swap(next);
    }
    ends.insert(ends.end(), pieces.begin(), pieces.end());
}

}  // namespace ember::tokenizer

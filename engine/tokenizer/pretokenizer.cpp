#include "tokenizer/pretokenizer.h"

#include <algorithm>
#include <array>
#include <vector>

#include "tokenizer/gpt2_pretokenizer.h"
#include "tokenizer/pattern_passes.h"
#include "tokenizer/text_scan.h"

namespace ember::tokenizer {
namespace {

struct Name {
    std::string_view name;
    PreTokenizer pre;
};

// llama.cpp's names for each rule set (llama-vocab.cpp), those Ember implements.
constexpr std::array<Name, 29> kNames{{
    {"gpt-2", PreTokenizer::Gpt2},           {"phi-2", PreTokenizer::Gpt2},
    {"roberta-bpe", PreTokenizer::Gpt2},     {"mpt", PreTokenizer::Gpt2},
    {"olmo", PreTokenizer::Gpt2},            {"starcoder", PreTokenizer::DigitsThenGpt2},
    {"refact", PreTokenizer::DigitsThenGpt2}, {"command-r", PreTokenizer::DigitsThenGpt2},
    {"smollm", PreTokenizer::DigitsThenGpt2}, {"codeshell", PreTokenizer::DigitsThenGpt2},
    {"exaone", PreTokenizer::DigitsThenGpt2}, {"minerva-7b", PreTokenizer::DigitsThenGpt2},
    {"llama3", PreTokenizer::Llama3},        {"llama-v3", PreTokenizer::Llama3},
    {"llama-bpe", PreTokenizer::Llama3},     {"falcon3", PreTokenizer::Llama3},
    {"qwen2", PreTokenizer::Qwen2},          {"deepseek-r1-qwen", PreTokenizer::Qwen2},
    {"stablelm2", PreTokenizer::Qwen2},      {"gpt-4o", PreTokenizer::Gpt4o},
    {"llama4", PreTokenizer::Gpt4o},         {"kanana2", PreTokenizer::Gpt4o},
    {"talkie", PreTokenizer::Gpt4o},         {"tekken", PreTokenizer::Tekken},
    {"deepseek-llm", PreTokenizer::DeepseekLlm}, {"deepseek-coder", PreTokenizer::DeepseekCoder},
    {"deepseek-v3", PreTokenizer::DeepseekV3}, {"falcon", PreTokenizer::Falcon},
    {"default", PreTokenizer::Default},
}};

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

size_t contraction_end_any_case(std::string_view text, size_t pos) {
    if (text[pos] != '\'' || pos + 1 >= text.size()) return pos;
    const char a = lower(text[pos + 1]);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return pos + 2;
    if (pos + 2 >= text.size()) return pos;
    const char b = lower(text[pos + 2]);
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return pos + 3;
    return pos;
}

// \p{N}{1,max_digits}
size_t digits_end(std::string_view text, size_t pos, int max_digits) {
    size_t end = pos;
    for (int i = 0; i < max_digits && end < text.size(); ++i) {
        const ScannedChar d = char_at(text, end);
        if (d.cls != CharClass::Number) break;
        end += d.len;
    }
    return end;
}

// Llama 3's and Qwen 2's pattern, alternative by alternative; max_digits is 3 or 1.
size_t llama3_chunk_end(std::string_view text, size_t pos, int max_digits) {
    if (const size_t end = contraction_end_any_case(text, pos); end != pos) return end;
    const ScannedChar c = char_at(text, pos);
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (c.cls == CharClass::Letter) return run_end(text, pos, CharClass::Letter);
    if (c.cls != CharClass::Number && !is_newline(text[pos]) && pos + c.len < text.size() &&
        char_at(text, pos + c.len).cls == CharClass::Letter)
        return run_end(text, pos + c.len, CharClass::Letter);
    if (c.cls == CharClass::Number) return digits_end(text, pos, max_digits);
    //  ?[^\s\p{L}\p{N}]+[\r\n]*
    const size_t other = text[pos] == ' ' && pos + 1 < text.size() ? pos + 1 : pos;
    if (char_at(text, other).cls == CharClass::Other) {
        size_t end = run_end(text, other, CharClass::Other);
        while (end < text.size() && is_newline(text[end])) ++end;
        return end;
    }
    return whitespace_chunk_end(text, pos);
}

// A letter as the case classes of Gpt4o's pattern see it: ASCII letters have one case, every
// other letter counts as both (llama.cpp's [^a-z] and [^A-Z] among letters).
struct CasedLetter {
    bool upper = false;  // a letter not a-z
    bool lower = false;  // a letter not A-Z
};

CasedLetter cased_at(std::string_view text, size_t pos) {
    if (pos >= text.size() || char_at(text, pos).cls != CharClass::Letter) return {};
    const char c = text[pos];
    return {!(c >= 'a' && c <= 'z'), !(c >= 'A' && c <= 'Z')};
}

// End of U*L+ (upper_first false) or U+L* (true) at pos, or pos where it does not match. As a
// regex engine runs it: U* gives letters back, last first, until L+ can start; the letters that
// count as both cases make that matter.
size_t cased_word_end(std::string_view text, size_t pos, bool upper_first) {
    std::vector<size_t> u_ends{pos};  // where U* may stop, shortest first
    for (size_t at = pos; cased_at(text, at).upper;) {
        at += char_at(text, at).len;
        u_ends.push_back(at);
    }
    const auto lower_run = [&](size_t at) {
        while (cased_at(text, at).lower) at += char_at(text, at).len;
        return at;
    };
    if (upper_first) return u_ends.size() > 1 ? lower_run(u_ends.back()) : pos;
    for (size_t k = u_ends.size(); k-- > 0;)
        if (cased_at(text, u_ends[k]).lower) return lower_run(u_ends[k]);
    return pos;
}

size_t gpt4o_chunk_end(std::string_view text, size_t pos, bool contractions, int max_digits) {
    const ScannedChar c = char_at(text, pos);
    // [^\r\n\p{L}\p{N}]?U*L+C, then the same with U+L*. Without the prefix character neither can
    // match where one stands, so it is taken whenever it can be.
    const bool prefix = c.cls != CharClass::Letter && c.cls != CharClass::Number && !is_newline(text[pos]);
    const size_t start = prefix ? pos + c.len : pos;
    for (const bool upper_first : {false, true}) {
        const size_t end = cased_word_end(text, start, upper_first);
        if (end != start) return contractions && end < text.size() ? contraction_end_any_case(text, end) : end;
    }
    if (c.cls == CharClass::Number) return digits_end(text, pos, max_digits);
    //  ?[^\s\p{L}\p{N}]+[\r\n/]*
    const size_t other = text[pos] == ' ' && pos + 1 < text.size() ? pos + 1 : pos;
    if (char_at(text, other).cls == CharClass::Other) {
        size_t end = run_end(text, other, CharClass::Other);
        while (end < text.size() && (is_newline(text[end]) || text[end] == '/')) ++end;
        return end;
    }
    return whitespace_chunk_end(text, pos);
}

// Digits are cut out first, so GPT-2's rules run on the text up to the next digit.
size_t digits_then_gpt2_chunk_end(std::string_view text, size_t pos) {
    const ScannedChar c = char_at(text, pos);
    if (c.cls == CharClass::Number) return pos + c.len;
    const size_t whole = gpt2_chunk_end(text, pos);
    // Only a digit inside the chunk or right after it (its lookahead) can change the cut.
    for (size_t i = pos; i < text.size() && i <= whole;) {
        const ScannedChar d = char_at(text, i);
        if (d.cls == CharClass::Number) return gpt2_chunk_end(text.substr(0, i), pos);
        i += d.len;
    }
    return whole;
}

// End (byte offset) of the chunk that starts at `pos` (< text.size()), for the one-pattern
// pre-tokenizers.
size_t chunk_end(PreTokenizer pre, std::string_view text, size_t pos) {
    switch (pre) {
        case PreTokenizer::Gpt2: return gpt2_chunk_end(text, pos);
        case PreTokenizer::DigitsThenGpt2: return digits_then_gpt2_chunk_end(text, pos);
        case PreTokenizer::Llama3: return llama3_chunk_end(text, pos, 3);
        case PreTokenizer::Qwen2: return llama3_chunk_end(text, pos, 1);
        case PreTokenizer::Gpt4o: return gpt4o_chunk_end(text, pos, true, 3);
        case PreTokenizer::Tekken: return gpt4o_chunk_end(text, pos, false, 1);
        default: return text.size();
    }
}

}  // namespace

std::optional<PreTokenizer> pre_tokenizer_from_name(std::string_view name) {
    const auto* it = std::find_if(kNames.begin(), kNames.end(), [&](const Name& n) { return n.name == name; });
    if (it == kNames.end()) return std::nullopt;
    return it->pre;
}

void pre_tokenize(PreTokenizer pre, std::string_view text, std::vector<size_t>& ends) {
    if (runs_in_passes(pre)) return split_in_passes(pre, text, ends);
    for (size_t pos = 0; pos < text.size();) {
        pos = chunk_end(pre, text, pos);
        ends.push_back(pos);
    }
}

}  // namespace ember::tokenizer

#pragma once
// The BPE pre-tokenizers, chosen by a file's `tokenizer.ggml.pre` as llama.cpp chooses them
// (docs/FORMATS.md §2.3): each cuts text into the chunks BPE merges within.

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace ember::tokenizer {

enum class PreTokenizer {
    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
    Gpt2,
    // Every digit alone, then GPT-2's rules on the text between (StarCoder, Refact, Command-R,
    // SmolLM, ...).
    DigitsThenGpt2,
    // (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
    // \s*[\r\n]+|\s+(?!\S)|\s+  (Llama 3; DeepSeek-R1's Llama distills)
    Llama3,
    // Llama 3's with \p{N} for \p{N}{1,3}: digits one at a time (Qwen 2, 2.5, 3; DeepSeek-R1's
    // Qwen distills).
    Qwen2,
    // Words cut where case changes, as llama.cpp writes OpenAI's o200k pattern (U: a letter not
    // a-z, L: a letter not A-Z, C: an optional contraction (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|
    // '[mM]|'[lL][lL]|'[dD])):
    // [^\r\n\p{L}\p{N}]?U*L+C|[^\r\n\p{L}\p{N}]?U+L*C|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|
    // \s*[\r\n]+|\s+(?!\S)|\s+  (GPT-4o's vocabulary)
    Gpt4o,
    // Gpt4o's without the contractions and with \p{N} for \p{N}{1,3} (Mistral's Tekken: Nemo,
    // Small 3, Pixtral).
    Tekken,
    // Several patterns, one after another (pattern_passes.h): DeepSeek LLM's (newlines alone,
    // then letters, punctuation, trailing white space, CJK and digit runs, each by explicit code
    // point ranges); DeepSeek Coder's (\p{L}, \p{P}, CJK, each digit); DeepSeek V3's and R1's
    // (\p{N}{1,3}, Han and kana, then a Llama 3-like pattern that keeps marks with letters);
    // Falcon's (punctuation runs, GPT-2's pattern, three-digit groups); llama.cpp's "default"
    // (Falcon's without the backtick among the punctuation, and digit runs apart before the
    // groups of three).
    DeepseekLlm,
    DeepseekCoder,
    DeepseekV3,
    Falcon,
    Default,
};

// The pre-tokenizer a `tokenizer.ggml.pre` value names, nullopt for one Ember does not have.
std::optional<PreTokenizer> pre_tokenizer_from_name(std::string_view name);

// Appends the end (byte offset) of each chunk of `text`, in order.
void pre_tokenize(PreTokenizer pre, std::string_view text, std::vector<size_t>& ends);

}  // namespace ember::tokenizer

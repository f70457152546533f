#pragma once
// The BPE pre-tokenizers, chosen by a file's `tokenizer.ggml.pre` as llama.cpp chooses them
// (docs/FORMATS.md §2.3): each cuts text into the chunks BPE merges within.

#include <cstddef>
#include <optional>
#include <string_view>

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
};

// The pre-tokenizer a `tokenizer.ggml.pre` value names, nullopt for one Ember does not have.
std::optional<PreTokenizer> pre_tokenizer_from_name(std::string_view name);

// End (byte offset) of the chunk that starts at `pos` (< text.size()).
size_t chunk_end(PreTokenizer pre, std::string_view text, size_t pos);

}  // namespace ember::tokenizer

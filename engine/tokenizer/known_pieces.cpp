#include "tokenizer/known_pieces.h"

#include <algorithm>
#include <array>

namespace ember::tokenizer {
namespace {

// Ends of turns and messages, and the fill-in-the-middle pad, repository and file separators,
// which llama.cpp also stops at. Gemma 4's pieces are left out with the model: llama.cpp keeps
// "</s>" an ordinary token when the vocabulary has them.
constexpr std::array<std::string_view, 31> kEndOfGeneration = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>", "<end_of_turn>",
    "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]", "<|end_of_text|>",
    "<end_of_utterance>", "<eos>", "<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>", "[e~[",
    "<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]",
    "<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>", "<|file_sep|>",
};

// The other fill-in-the-middle markers: prefix, suffix, middle.
constexpr std::array<std::string_view, 24> kFillInTheMiddle = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "begin\xEF\xBD\x9C>",
    "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81hole\xEF\xBD\x9C>",
    "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\xEF\xBD\x9C" "fim\xE2\x96\x81" "end\xEF\xBD\x9C>",
    "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>",
};

template <size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view piece) {
    return std::find(list.begin(), list.end(), piece) != list.end();
}

}  // namespace

bool looks_like_control(std::string_view piece) { return listed(kEndOfGeneration, piece) || listed(kFillInTheMiddle, piece); }

bool ends_generation(std::string_view piece) { return listed(kEndOfGeneration, piece); }

}  // namespace ember::tokenizer

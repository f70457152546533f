#pragma once
// Pieces llama.cpp recognises by their text, whatever type the vocabulary gives them: it takes
// them for control tokens, so plain text never turns into them, and it ends generation on most.
// Files converted from Hugging Face often mark them user-defined or normal (Gemma's "</s>",
// Qwen's "<|fim_pad|>"); Ember feeds and stops on the tokens llama.cpp does.

#include <string_view>

namespace ember::tokenizer {

// An end of turn or message, a fill-in-the-middle marker: control, whatever the file says.
bool looks_like_control(std::string_view piece);

// Generation stops at it (besides eos).
bool ends_generation(std::string_view piece);

}  // namespace ember::tokenizer

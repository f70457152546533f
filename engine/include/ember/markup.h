#pragma once
// Keeping text as text inside a prompt that Model::tokenize_markup reads.
//
// tokenize_markup turns the pieces of control tokens ("<|im_start|>", "</s>") into those tokens
// wherever they appear. A chat prompt also holds what people wrote, and a question about "</s>"
// or a pasted transcript with "<|im_end|>" in it must not end a turn or open a system message.
// Such text is escaped before it goes into the template: a U+FDD0 (a Unicode noncharacter, never
// in real text) goes inside every control piece in it, so the piece no longer matches, and
// tokenize_markup drops every U+FDD0 from the text it encodes, leaving the characters as written.
// User-defined pieces (Qwen's "<think>", whitespace runs) are not escaped: Hugging Face's and
// llama.cpp's tokenizers match those in any text, the user's included, and so does tokenize_markup.

#include <string>
#include <string_view>
#include <vector>

namespace ember {

inline constexpr std::string_view kMarkupEscape = "\xEF\xB7\x90";  // U+FDD0 in UTF-8

// `text` with kMarkupEscape after the first character of every occurrence of every piece.
// Pieces of a single character cannot be broken up and are left alone (no vocabulary in use
// has one).
std::string escape_markup(std::string_view text, const std::vector<std::string>& control_pieces);

// `text` without kMarkupEscape: what an escaped text says, for display.
std::string unescape_markup(std::string_view text);

}  // namespace ember

#pragma once
// Cuts a template into text and the tokens of its {{ … }} and {% … %} tags, with Jinja's
// whitespace rules as Hugging Face sets them for chat templates: trim_blocks, lstrip_blocks,
// and "-" on either side of a tag. Comments are dropped.

#include <string>
#include <string_view>
#include <vector>

namespace ember::jinja {

enum class TokenKind { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Integer, Float, Operator, End };

struct Token {
    TokenKind kind;
    std::string text;  // the text, name, operator, string's value or number as written
    int line = 1;
};

// Throws TemplateError naming the line for an unterminated tag, string or comment.
std::vector<Token> lex(std::string_view source);

}  // namespace ember::jinja

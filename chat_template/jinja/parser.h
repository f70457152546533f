#pragma once
// Jinja's statements and expressions, the subset chat templates use: if/elif/else, for (with
// loop.*, else, a filter, break/continue), set (also of a namespace attribute and as a block),
// macros (without call blocks), generation blocks, and Python-like expressions with filters and
// tests.

#include <vector>

#include "chat_template/jinja/ast.h"
#include "chat_template/jinja/lexer.h"

namespace ember::jinja {

// Throws TemplateError naming the line and what was expected.
std::vector<Node> parse(const std::vector<Token>& tokens);

}  // namespace ember::jinja

#pragma once
// Turns what the user typed into an FTS5 match expression that cannot be a syntax error.

#include <QString>

namespace ember::store {

// Every word becomes a quoted phrase (so quotes, AND, NEAR, * or - in the text are just text) and
// all must match; the last word matches as a prefix unless the text ends in a space, for search
// as you type. Words without a letter or digit are dropped: the tokenizer would find nothing in
// them. Empty when nothing is left to search for.
QString ftsMatchExpression(const QString& text);

}  // namespace ember::store

#pragma once
// Highlighting for fenced code in answers, as HTML for a rich-text view: KDE Syntax-Highlighting
// where the build found its Qt 6 version (app/chat/ksyntax/), and a built-in highlighter for the
// common languages (keywords, strings, comments and numbers) otherwise and for what it does not
// know. Unknown languages come back escaped and unstyled.

#include <QString>

namespace ember::app {

// `code` as <pre> HTML with coloured spans; every character of it appears, escaped.
QString highlight_code(const QString& code, const QString& language);

// The same by the built-in highlighter alone.
QString builtin_highlight_code(const QString& code, const QString& language);

}  // namespace ember::app

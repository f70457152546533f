#pragma once
// The built-in highlighter for fenced code in answers: keywords, strings, comments and numbers
// of the common languages, as HTML for a rich-text view. Unknown languages come back escaped and
// unstyled. (KDE Syntax-Highlighting has no Qt 6 build in Debian 12, so it is not used.)

#include <QString>

namespace ember::app {

// `code` as <pre> HTML with coloured spans; every character of it appears, escaped.
QString highlight_code(const QString& code, const QString& language);

}  // namespace ember::app

#pragma once
// Fenced code highlighted by KDE Syntax-Highlighting (some 300 languages), built in when CMake finds
// its Qt 6 build (KF6SyntaxHighlighting). Written against the API KF5 and KF6 share, so CI checks
// it with Debian 12's KF5 build (tests/app/check_ksyntax_kf5.sh), Debian 12 having no KF6.

#include <QString>

#include <optional>

namespace ember::app {

// `code` as <pre> HTML with coloured spans, in the theme that suits the application's palette;
// every character of it appears, escaped. Nothing when KDE Syntax-Highlighting does not know
// `language`, by its name in any case ("python", "C++") or as a file extension ("py", "rs").
std::optional<QString> highlight_with_ksyntax(const QString& code, const QString& language);

}  // namespace ember::app

// The KDE Syntax-Highlighting adapter (app/chat/ksyntax/) on a real build of the library: each
// known language comes back as HTML whose text is exactly the code, with its keywords styled;
// names match in any case or as file extensions; unknown ones give nothing (the built-in
// highlighter takes them); a dark palette gets the dark theme's colours. Built with Qt 5 against
// Debian 12's KF5 build by check_ksyntax_kf5.sh, with the app's highlight_code() as a build that
// found the library compiles it; prints each failure and exits 1 on any.
#include <QGuiApplication>
#include <QPalette>
#include <QRegularExpression>

#include <cstdio>

#include "app/chat/code_highlighter.h"
#include "app/chat/ksyntax/code_highlighter_ksyntax.h"

namespace {

int g_checks = 0;
int g_failures = 0;

void check(bool ok, const QString& what) {
    ++g_checks;
    if (ok) return;
    ++g_failures;
    std::fprintf(stderr, "FAIL: %s\n", qPrintable(what));
}

// The text a rich-text view shows for the adapter's HTML.
QString shown_text(QString html) {
    static const QRegularExpression tags(QStringLiteral("<[^>]*>"));
    html.remove(tags);
    html.replace(QLatin1String("&lt;"), QLatin1String("<"));
    html.replace(QLatin1String("&gt;"), QLatin1String(">"));
    html.replace(QLatin1String("&quot;"), QLatin1String("\""));
    html.replace(QLatin1String("&#39;"), QLatin1String("'"));
    html.replace(QLatin1String("&amp;"), QLatin1String("&"));
    return html;
}

// Whether `word` is shown styled (coloured, bold or italic) on its own.
bool styled(const QString& html, const QString& word) {
    return html.contains(QRegularExpression(QStringLiteral("<span style=\"[^\"]+\">") +
                                            QRegularExpression::escape(word.toHtmlEscaped()) + QStringLiteral("</span>")));
}

}  // namespace

int main(int argc, char** argv) {
    QGuiApplication app(argc, argv);
    struct Case {
        const char* language;
        QString code;
        QString keyword;
    };
    const Case cases[] = {
        {"python", QStringLiteral("def f(x):\n    return x < 1 and \"<a>\" != '&'  # note & more\n"), QStringLiteral("def")},
        {"PYTHON", QStringLiteral("import os\n"), QStringLiteral("import")},
        {"py", QStringLiteral("while True:\n    pass"), QStringLiteral("while")},
        {"cpp", QStringLiteral("int main() { return a<b && s == \"x\"; } // done"), QStringLiteral("return")},
        {"C++", QStringLiteral("template <typename T> struct S {};"), QStringLiteral("template")},
        {"rs", QStringLiteral("fn main() {\n\tlet x = 1;\n}"), QStringLiteral("fn")},
        {"javascript", QStringLiteral("const a = `t ${b}` <= 2;"), QStringLiteral("const")},
        {"bash", QStringLiteral("if [ -f \"$x\" ]; then echo \"<ok>\"; fi"), QStringLiteral("if")},
    };
    for (const Case& c : cases) {
        const QString label = QString::fromLatin1(c.language);
        const auto html = ember::app::highlight_with_ksyntax(c.code, label);
        check(html.has_value(), label + QStringLiteral(": not known"));
        if (!html) continue;
        check(html->startsWith(QStringLiteral("<pre style=\"white-space:pre-wrap\">")) &&
                  html->endsWith(QStringLiteral("</pre>")),
              label + QStringLiteral(": not one <pre> block: ") + *html);
        check(shown_text(*html) == c.code, label + QStringLiteral(": shows other text than the code: ") + *html);
        check(styled(*html, c.keyword), label + QStringLiteral(": '%1' not styled: ").arg(c.keyword) + *html);
    }

    // A string that spans lines stays a string on its second line: state carries over.
    const auto doc = ember::app::highlight_with_ksyntax(QStringLiteral("s = \"\"\"first\nsecond\"\"\""), QStringLiteral("python"));
    check(doc && styled(*doc, QStringLiteral("second\"\"\"")), QStringLiteral("multi-line string: ") + doc.value_or(QString()));

    check(!ember::app::highlight_with_ksyntax(QStringLiteral("x"), QStringLiteral("no-such-language")),
          QStringLiteral("an unknown language was highlighted"));
    check(!ember::app::highlight_with_ksyntax(QStringLiteral("x"), QString()), QStringLiteral("no language was highlighted"));
    check(ember::app::highlight_with_ksyntax(QString(), QStringLiteral("python")) ==
              QStringLiteral("<pre style=\"white-space:pre-wrap\"></pre>"),
          QStringLiteral("empty code"));

    // The app's highlighter, built with the library, uses it where it knows the language, and the
    // built-in highlighter for the rest.
    const QString python = QStringLiteral("def f(): pass");
    check(ember::app::highlight_code(python, QStringLiteral("python")) ==
              ember::app::highlight_with_ksyntax(python, QStringLiteral("python")),
          QStringLiteral("highlight_code did not use the library"));
    check(ember::app::highlight_code(QStringLiteral("a <b>"), QStringLiteral("no-such-language")) ==
              ember::app::builtin_highlight_code(QStringLiteral("a <b>"), QStringLiteral("no-such-language")),
          QStringLiteral("highlight_code: an unknown language not left to the built-in highlighter"));

    // The theme follows the palette: light and dark colour the same keyword differently.
    const QString code = QStringLiteral("def f(): pass");
    QPalette light;
    light.setColor(QPalette::Window, Qt::white);
    light.setColor(QPalette::Base, Qt::white);
    light.setColor(QPalette::Text, Qt::black);
    QGuiApplication::setPalette(light);
    const auto on_light = ember::app::highlight_with_ksyntax(code, QStringLiteral("python"));
    QPalette dark;
    dark.setColor(QPalette::Window, QColor(0x20, 0x20, 0x20));
    dark.setColor(QPalette::Base, QColor(0x20, 0x20, 0x20));
    dark.setColor(QPalette::Text, Qt::white);
    QGuiApplication::setPalette(dark);
    const auto on_dark = ember::app::highlight_with_ksyntax(code, QStringLiteral("python"));
    check(on_light && on_dark && *on_light != *on_dark,
          QStringLiteral("same colours on light and dark: ") + on_light.value_or(QString()));

    std::printf("KDE Syntax-Highlighting adapter (KF5 build): %d of %d checks passed\n", g_checks - g_failures, g_checks);
    return g_failures == 0 ? 0 : 1;
}

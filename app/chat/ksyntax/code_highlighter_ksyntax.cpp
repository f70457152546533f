#include "app/chat/ksyntax/code_highlighter_ksyntax.h"

#include <KSyntaxHighlighting/AbstractHighlighter>
#include <KSyntaxHighlighting/Definition>
#include <KSyntaxHighlighting/Format>
#include <KSyntaxHighlighting/Repository>
#include <KSyntaxHighlighting/State>
#include <KSyntaxHighlighting/Theme>
#include <QGuiApplication>
#include <QHash>
#include <QPalette>
#include <QStringList>

#include <algorithm>

namespace ember::app {
namespace {

namespace ksh = KSyntaxHighlighting;

// Its index of definitions is read from many files: once per process.
ksh::Repository& repository() {
    static ksh::Repository repo;
    return repo;
}

// Fence info words are written in any case ("python", "Python"); the library's names are exact.
ksh::Definition definition_for(const QString& language) {
    static const QHash<QString, ksh::Definition> by_name = [] {
        QHash<QString, ksh::Definition> out;
        const auto all = repository().definitions();
        for (const ksh::Definition& d : all) out.insert(d.name().toLower(), d);
        return out;
    }();
    if (language.isEmpty()) return {};
    if (const auto it = by_name.constFind(language.toLower()); it != by_name.constEnd()) return *it;
    return repository().definitionForFileName(QStringLiteral("code.") + language);
}

// Collects the library's formats line by line as HTML spans.
class HtmlWriter final : public ksh::AbstractHighlighter {
public:
    QString write(const QString& code) {
        html_.clear();
        ksh::State state;
        const QStringList lines = code.split(u'\n');
        for (qsizetype i = 0; i < lines.size(); ++i) {
            if (i > 0) html_ += u'\n';
            line_ = lines[i];
            written_ = 0;
            state = highlightLine(QStringView(line_), state);
            plain_until(int(line_.size()));
        }
        return html_;
    }

protected:
    void applyFormat(int offset, int length, const ksh::Format& format) override {
        plain_until(offset);
        const QString text = line_.mid(offset, length).toHtmlEscaped();
        written_ = offset + length;
        const ksh::Theme t = theme();
        QStringList style;
        if (!format.isDefaultTextStyle(t)) {
            if (format.hasTextColor(t)) style << QStringLiteral("color:") + format.textColor(t).name();
            if (format.isBold(t)) style << QStringLiteral("font-weight:bold");
            if (format.isItalic(t)) style << QStringLiteral("font-style:italic");
        }
        if (style.isEmpty() || text.trimmed().isEmpty()) {
            html_ += text;
            return;
        }
        html_ += QStringLiteral("<span style=\"%1\">").arg(style.join(u';')) + text + QStringLiteral("</span>");
    }

private:
    // Text the library gave no format (it may skip some) goes out as it is, escaped.
    void plain_until(int offset) {
        if (offset > written_) html_ += line_.mid(written_, offset - written_).toHtmlEscaped();
        written_ = std::max(written_, offset);
    }

    QString html_;  // of the code so far
    QString line_;
    int written_ = 0;
};

}  // namespace

std::optional<QString> highlight_with_ksyntax(const QString& code, const QString& language) {
    const ksh::Definition definition = definition_for(language);
    if (!definition.isValid()) return std::nullopt;
    HtmlWriter writer;
    writer.setDefinition(definition);
    writer.setTheme(repository().themeForPalette(QGuiApplication::palette()));
    return QStringLiteral("<pre style=\"white-space:pre-wrap\">") + writer.write(code) + QStringLiteral("</pre>");
}

}  // namespace ember::app

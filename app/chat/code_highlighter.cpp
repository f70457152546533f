#include "app/chat/code_highlighter.h"

#ifdef EMBER_HAVE_KSYNTAX
#include "app/chat/ksyntax/code_highlighter_ksyntax.h"
#endif

#include <QSet>
#include <QStringList>

namespace ember::app {
namespace {

// Mid-tone colours that read on light and dark backgrounds alike.
const char* const kKeyword = "#3b78d8";
const char* const kString = "#2f9e5b";
const char* const kComment = "#8a8a8a";
const char* const kNumber = "#c26d1f";

struct Language {
    QSet<QString> keywords;
    bool slash_comments = false;  // // and /* */
    bool hash_comments = false;   // #
    bool dash_comments = false;   // -- (SQL)
    bool backtick_strings = false;
    bool triple_quotes = false;   // Python's """ and '''
};

QSet<QString> words(const char* list) {
    QSet<QString> out;
    for (const QString& w : QString::fromLatin1(list).split(u' ', Qt::SkipEmptyParts)) out.insert(w);
    return out;
}

const Language* language_for(const QString& name) {
    static const Language c_like{
        words("alignas auto bool break case catch char class const constexpr continue default delete do double else "
              "enum explicit export extern false final float for friend goto if inline int long namespace new "
              "noexcept nullptr operator override private protected public return short signed sizeof static "
              "struct switch template this throw true try typedef typename union unsigned using virtual void "
              "volatile while abstract boolean byte extends implements import instanceof interface package super "
              "synchronized var let function async await yield of in typeof undefined null fn impl mut pub crate "
              "mod trait match loop move ref self Self where dyn func go chan defer range map type struct select "
              "fallthrough interface string"),
        true, false, false, true, false};
    static const Language hash{
        words("and as assert async await break class continue def del elif else except False finally for from "
              "global if import in is lambda None nonlocal not or pass raise return True try while with yield "
              "then fi do done case esac function local export echo readonly set unset begin end module require "
              "puts nil unless until"),
        false, true, false, false, true};
    static const Language sql{
        words("select from where and or not insert into values update set delete create table drop alter index "
              "join left right inner outer on group by order having limit offset as distinct union all null is "
              "primary key references default begin commit rollback with SELECT FROM WHERE AND OR NOT INSERT INTO "
              "VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER INDEX JOIN LEFT RIGHT INNER OUTER ON GROUP BY "
              "ORDER HAVING LIMIT OFFSET AS DISTINCT UNION ALL NULL IS PRIMARY KEY REFERENCES DEFAULT WITH"),
        false, false, true, false, false};
    static const Language data{{}, false, false, false, false, false};  // JSON: strings and numbers
    static const QSet<QString> c_names = words(
        "c cpp c++ cc cxx h hpp cuda cu java javascript js jsx typescript ts tsx rust rs go golang csharp cs kotlin "
        "kt swift scala dart php glsl hlsl");
    static const QSet<QString> hash_names =
        words("python py python3 bash sh shell zsh console ruby rb perl pl r yaml yml toml cmake dockerfile "
              "makefile make powershell ps1 ini conf");
    const QString n = name.toLower();
    if (c_names.contains(n)) return &c_like;
    if (hash_names.contains(n)) return &hash;
    if (n == QLatin1String("sql") || n == QLatin1String("sqlite") || n == QLatin1String("postgresql")) return &sql;
    if (n == QLatin1String("json") || n == QLatin1String("jsonc")) return &data;
    return nullptr;
}

bool word_char(QChar c) { return c.isLetterOrNumber() || c == u'_'; }

void span(QString& out, const char* colour, QStringView text, bool italic = false) {
    out += QStringLiteral("<span style=\"color:%1%2\">").arg(QLatin1String(colour),
                                                             italic ? QStringLiteral(";font-style:italic") : QString());
    out += text.toString().toHtmlEscaped();
    out += QStringLiteral("</span>");
}

}  // namespace

QString highlight_code(const QString& code, const QString& language) {
#ifdef EMBER_HAVE_KSYNTAX
    if (auto html = highlight_with_ksyntax(code, language)) return *html;
#endif
    return builtin_highlight_code(code, language);
}

QString builtin_highlight_code(const QString& code, const QString& name) {
    QString out = QStringLiteral("<pre style=\"white-space:pre-wrap\">");
    const Language* lang = language_for(name);
    if (!lang) return out + code.toHtmlEscaped() + QStringLiteral("</pre>");
    const QStringView s(code);
    const qsizetype n = s.size();
    qsizetype plain = 0;  // start of text not yet written
    auto flush = [&](qsizetype to) {
        if (to > plain) out += s.mid(plain, to - plain).toString().toHtmlEscaped();
    };
    auto until_eol = [&](qsizetype i) {
        const qsizetype e = s.indexOf(u'\n', i);
        return e < 0 ? n : e;
    };
    qsizetype i = 0;
    while (i < n) {
        const QChar c = s[i];
        qsizetype end = -1;
        const char* colour = nullptr;
        if (lang->slash_comments && c == u'/' && i + 1 < n && s[i + 1] == u'/') {
            end = until_eol(i), colour = kComment;
        } else if (lang->slash_comments && c == u'/' && i + 1 < n && s[i + 1] == u'*') {
            const qsizetype e = s.indexOf(u"*/", i + 2);
            end = e < 0 ? n : e + 2, colour = kComment;
        } else if ((lang->hash_comments && c == u'#') || (lang->dash_comments && c == u'-' && i + 1 < n && s[i + 1] == u'-')) {
            end = until_eol(i), colour = kComment;
        } else if (c == u'"' || c == u'\'' || (lang->backtick_strings && c == u'`')) {
            colour = kString;
            if (lang->triple_quotes && i + 2 < n && s[i + 1] == c && s[i + 2] == c) {
                const qsizetype e = s.indexOf(QString(3, c), i + 3);
                end = e < 0 ? n : e + 3;
            } else {
                end = i + 1;
                while (end < n && s[end] != c && (c == u'`' || s[end] != u'\n')) end += s[end] == u'\\' ? 2 : 1;
                end = std::min(end + 1, n);
            }
        } else if (c.isDigit() && (i == 0 || !word_char(s[i - 1]))) {
            end = i;
            while (end < n && (s[end].isLetterOrNumber() || s[end] == u'.' || s[end] == u'_')) ++end;
            colour = kNumber;
        } else if (word_char(c) && (i == 0 || !word_char(s[i - 1]))) {
            qsizetype e = i;
            while (e < n && word_char(s[e])) ++e;
            if (lang->keywords.contains(s.mid(i, e - i).toString())) end = e, colour = kKeyword;
            else {
                i = e;
                continue;
            }
        }
        if (!colour) {
            ++i;
            continue;
        }
        flush(i);
        span(out, colour, s.mid(i, end - i), colour == kComment);
        plain = i = end;
    }
    flush(n);
    return out + QStringLiteral("</pre>");
}

}  // namespace ember::app

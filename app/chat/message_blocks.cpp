#include "app/chat/message_blocks.h"

#include <QRegularExpression>

#include "app/chat/code_highlighter.h"

namespace ember::app {
namespace {

const QString kThinkOpen = QStringLiteral("<think>");
const QString kThinkClose = QStringLiteral("</think>");

struct Fence {
    QChar ch;
    int length = 0;
    QString language;
    int body = 0;  // offset after the fence line
};

int line_end(const QString& s, int p) {
    const int nl = s.indexOf(u'\n', p);
    return nl < 0 ? int(s.size()) : nl;
}

// A fence opens at line start p: up to three spaces, then ``` or ~~~ (or longer). Only a whole
// line counts: the info word is not known until the line ends.
bool opening_fence(const QString& s, int p, Fence& f) {
    const int end = line_end(s, p);
    if (end == s.size()) return false;
    int i = p;
    while (i < end && i - p < 3 && s[i] == u' ') ++i;
    if (i >= end || (s[i] != u'`' && s[i] != u'~')) return false;
    const QChar ch = s[i];
    int n = 0;
    while (i + n < end && s[i + n] == ch) ++n;
    if (n < 3) return false;
    const QString info = s.mid(i + n, end - i - n).trimmed();
    f = {ch, n, info.section(u' ', 0, 0), end + 1};
    return true;
}

// A closing fence: the same character at least as many times, nothing else on the line.
bool closing_fence(const QString& s, int p, int end, const Fence& f) {
    int i = p;
    while (i < end && i - p < 3 && s[i] == u' ') ++i;
    int n = 0;
    while (i + n < end && s[i + n] == f.ch) ++n;
    if (n < f.length) return false;
    for (int k = i + n; k < end; ++k)
        if (!s[k].isSpace()) return false;
    return true;
}

bool blank(const QString& s, int from, int to) {
    for (int i = from; i < to; ++i)
        if (!s[i].isSpace()) return false;
    return true;
}

// A paragraph that may start a block of its own: a line that is not indented and not a list item
// (Markdown joins those to the list before the blank line). Decided from the line's first
// characters, as soon as they are there, so a streamed answer is cut where the whole one is even
// when a <think> or fence later on that line closes the block; a line that ends, for now, inside
// a possible list marker ("1", "-") waits for more text or the end of the answer.
bool starts_paragraph(const QString& s, int line, int eol, bool complete) {
    if (line >= eol || s[line].isSpace()) return false;
    const bool decided = eol < s.size() || complete;
    int i = line;
    if (s[i] == u'-' || s[i] == u'*' || s[i] == u'+') {
        ++i;
    } else if (s[i].isDigit()) {
        while (i < eol && i - line < 10 && s[i].isDigit()) ++i;
        if (i - line == 10) return true;  // longer than a list number
        if (i == eol) return decided;
        if (s[i] != u'.' && s[i] != u')') return true;
        ++i;
    } else {
        return true;
    }
    return i < eol && !s[i].isSpace();
}

// "[label]: url" lets any paragraph link to it, so a finished answer with one keeps its prose in
// one block, where Qt's Markdown reader can resolve the link.
bool has_link_definition(const QString& s, int from) {
    static const QRegularExpression definition(QStringLiteral("^ {0,3}\\[[^\\]\\n]+\\]:"),
                                               QRegularExpression::MultilineOption);
    return definition.match(s, from).hasMatch();
}

void add_text(QVector<MessageBlock>& out, const QString& s, int from, int to) {
    if (to > from && !blank(s, from, to))
        out.push_back({MessageBlock::Kind::Text, s.mid(from, to - from), {}, {}, false, from});
}

}  // namespace

QVector<MessageBlock> split_blocks(const QString& s, int from, bool complete) {
    QVector<MessageBlock> out;
    int p = from;      // start of the text not yet in a block
    int line = from;   // start of the line being looked at
    bool after_blank = false;  // the line before `line` is blank
    const bool cut_paragraphs = !complete || !has_link_definition(s, from);
    const int n = int(s.size());
    while (line <= n && p < n) {
        const int think = s.indexOf(kThinkOpen, line);
        const int eol = line_end(s, line);
        // Prose is cut at paragraphs, so a streamed token re-renders the last paragraph only.
        if (cut_paragraphs && after_blank && !blank(s, p, line) && starts_paragraph(s, line, eol, complete)) {
            add_text(out, s, p, line);
            p = line;
        }
        Fence fence;
        if (think >= 0 && think < eol) {
            add_text(out, s, p, think);
            const int body = think + int(kThinkOpen.size());
            const int close = s.indexOf(kThinkClose, body);
            MessageBlock b{MessageBlock::Kind::Think, s.mid(body, (close < 0 ? n : close) - body).trimmed(), {}, {},
                           close < 0, think};
            out.push_back(b);
            if (close < 0) return out;
            p = line = close + int(kThinkClose.size());
            after_blank = false;
            continue;
        }
        if (opening_fence(s, line, fence)) {
            add_text(out, s, p, line);
            MessageBlock b{MessageBlock::Kind::Code, {}, fence.language, {}, true, line};
            int q = fence.body;
            int code_end = n;
            while (q <= n) {
                const int end = line_end(s, q);
                if ((end < n || complete) && q < n && closing_fence(s, q, end, fence)) {
                    b.open = false;
                    code_end = q;
                    q = end < n ? end + 1 : n;
                    break;
                }
                if (end >= n) {
                    q = n;
                    break;
                }
                q = end + 1;
            }
            // The newline before the closing fence belongs to the fence, not to the code.
            b.text = s.mid(fence.body, std::max(0, code_end - fence.body - (b.open ? 0 : 1)));
            if (!b.open && code_end == fence.body) b.text.clear();
            b.html = highlight_code(b.text, b.language);
            out.push_back(b);
            p = line = q;
            after_blank = false;
            if (b.open) return out;
            continue;
        }
        if (eol >= n) break;
        after_blank = blank(s, line, eol);
        line = eol + 1;
    }
    add_text(out, s, p, n);
    return out;
}

void extend_blocks(QVector<MessageBlock>& blocks, const QString& content) {
    const int from = blocks.isEmpty() ? 0 : blocks.back().start;
    if (!blocks.isEmpty()) blocks.pop_back();
    blocks += split_blocks(content, from, false);
}

}  // namespace ember::app

// How answers are cut into Markdown, code and <think> blocks, on arbitrary text: the blocks are
// in order and each is text of the answer; growing the answer in random pieces gives the same
// blocks as splitting it whole (the streaming rule); highlighting keeps every character.
#include <QString>

#include <cstdint>

#include "app/chat/code_highlighter.h"
#include "app/chat/message_blocks.h"
#include "fuzz_support.h"

namespace {

QString plain_of_html(const QString& html) {
    QString out;
    bool tag = false;
    for (QChar c : html) {
        if (c == u'<') tag = true;
        else if (c == u'>') tag = false;
        else if (!tag) out += c;
    }
    return out.replace(QStringLiteral("&lt;"), QStringLiteral("<"))
        .replace(QStringLiteral("&gt;"), QStringLiteral(">"))
        .replace(QStringLiteral("&quot;"), QStringLiteral("\""))
        .replace(QStringLiteral("&amp;"), QStringLiteral("&"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    using namespace ember::app;
    const uint8_t chunk = uint8_t(data[0] % 7 + 1);
    const QString text = QString::fromUtf8(reinterpret_cast<const char*>(data) + 1, qsizetype(size - 1));

    const QVector<MessageBlock> whole = split_blocks(text, 0, false);
    int previous = -1;
    for (const MessageBlock& b : whole) {
        if (b.start <= previous || b.start >= text.size()) ember::fuzz::fail("blocks out of order or outside the text");
        previous = b.start;
        if (b.kind == MessageBlock::Kind::Code && plain_of_html(b.html) != b.text)
            ember::fuzz::fail("highlighting lost or changed characters");
    }

    QVector<MessageBlock> grown;
    for (qsizetype p = chunk; ; p += chunk) {
        const QString so_far = text.left(std::min(p, text.size()));
        extend_blocks(grown, so_far);
        if (so_far.size() == text.size()) break;
    }
    if (grown.size() != whole.size()) ember::fuzz::fail("streamed blocks differ from the whole text's");
    for (qsizetype i = 0; i < whole.size(); ++i)
        if (grown[i].start != whole[i].start || grown[i].text != whole[i].text || grown[i].kind != whole[i].kind ||
            grown[i].open != whole[i].open)
            ember::fuzz::fail("streamed blocks differ from the whole text's");
    split_blocks(text, 0, true);
    return 0;
}

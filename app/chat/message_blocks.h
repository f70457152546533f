#pragma once
// An answer as the chat shows it: Markdown text cut at paragraphs, fenced code blocks
// (highlighted, with a Copy button) and <think> sections (collapsible). While an answer streams
// only its last block can change, so extend_blocks() re-reads from the last block's start: the
// cost of a new piece of text grows with the last paragraph or code block, not with the answer.

#include <QString>
#include <QVector>

namespace ember::app {

struct MessageBlock {
    enum class Kind { Text, Code, Think };
    Kind kind = Kind::Text;
    QString text;       // Markdown for Text and Think; the code itself for Code
    QString language;   // Code: the fence's info word ("python"), may be empty
    QString html;       // Code: the highlighted text as HTML
    bool open = false;  // Code/Think: no closing fence or </think> yet
    int start = 0;      // offset of the block in the message
};

// The blocks of `content` from offset `from`, which must be where a block starts (0, or the start
// of a block an earlier call returned). `complete`: the message is finished, so a closing fence
// on its last line counts even without a newline after it.
QVector<MessageBlock> split_blocks(const QString& content, int from = 0, bool complete = true);

// `blocks` of a message that has since grown to `content` (only appended to).
void extend_blocks(QVector<MessageBlock>& blocks, const QString& content);

}  // namespace ember::app

#include "app/store/chat_markdown.h"

#include <QCoreApplication>
#include <QHash>
#include <QStringList>

#include <algorithm>

namespace ember::store {
namespace {

// Root to the chat's active leaf, from the records' own parent links.
QList<const Message*> activeBranch(const ChatRecord& record) {
    QHash<qint64, const Message*> byId;
    for (const Message& message : record.messages)
        byId.insert(message.id, &message);
    QList<const Message*> branch;
    for (const Message* m = byId.value(record.chat.activeLeaf.value_or(0)); m;
         m = m->parentId ? byId.value(*m->parentId) : nullptr)
        branch.append(m);
    std::reverse(branch.begin(), branch.end());
    return branch;
}

QString heading(Role role) {
    switch (role) {
    case Role::System:
        return QCoreApplication::translate("ChatMarkdown", "System");
    case Role::User:
        return QCoreApplication::translate("ChatMarkdown", "User");
    case Role::Assistant:
        return QCoreApplication::translate("ChatMarkdown", "Assistant");
    }
    Q_UNREACHABLE();
}

QString statsLine(const GenerationStats& stats) {
    QStringList parts;
    if (stats.genTokens)
        parts << QCoreApplication::translate("ChatMarkdown", "%1 tokens").arg(*stats.genTokens);
    if (stats.genTps)
        parts << QCoreApplication::translate("ChatMarkdown", "%1 tok/s").arg(*stats.genTps, 0, 'f', 1);
    if (stats.ttftMs)
        parts << QCoreApplication::translate("ChatMarkdown", "first token %1 ms").arg(*stats.ttftMs);
    if (!stats.stopReason.isEmpty())
        parts << QCoreApplication::translate("ChatMarkdown", "stop: %1").arg(stats.stopReason);
    return parts.join(QStringLiteral(" · "));
}

QString quoted(const QString& text) {
    return QStringLiteral("> ") + text.split(QLatin1Char('\n')).join(QStringLiteral("\n> "));
}

QString chatToMarkdown(const ChatRecord& record) {
    const Chat& chat = record.chat;
    QString out = QStringLiteral("# %1\n\n").arg(chat.title.simplified());
    out += QCoreApplication::translate("ChatMarkdown", "- Created: %1\n").arg(chat.created.toString(Qt::ISODate));
    if (!chat.options.modelPath.isEmpty())
        out += QCoreApplication::translate("ChatMarkdown", "- Model: `%1`\n").arg(chat.options.modelPath);
    if (!chat.options.systemPrompt.isEmpty())
        out += QCoreApplication::translate("ChatMarkdown", "\n**System prompt**\n\n%1\n").arg(quoted(chat.options.systemPrompt));
    for (const Message* message : activeBranch(record)) {
        out += QStringLiteral("\n## %1\n\n%2\n").arg(heading(message->role), message->content);
        if (message->status == MessageStatus::Interrupted)
            out += QCoreApplication::translate("ChatMarkdown", "\n*(interrupted)*\n");
        if (const QString stats = statsLine(message->stats); !stats.isEmpty())
            out += QStringLiteral("\n*%1*\n").arg(stats);
    }
    return out;
}

}  // namespace

QString chatsToMarkdown(const QList<ChatRecord>& records) {
    QStringList chats;
    for (const ChatRecord& record : records)
        chats << chatToMarkdown(record);
    return chats.join(QStringLiteral("\n---\n\n"));
}

}  // namespace ember::store

// ChatStore: export (Markdown, JSON) and import (JSON).
#include "app/store/chat_store.h"

#include "app/store/chat_json.h"
#include "app/store/chat_markdown.h"
#include "app/store/db.h"
#include "app/store/store_guard.h"
#include "app/store/store_rows.h"
#include "app/store/transaction.h"

#include <QCoreApplication>
#include <QHash>
#include <QJsonDocument>

namespace ember::store {
namespace {

// Imported messages keep their times, status and statistics, so they bypass insertMessage().
qint64 insertImportedMessage(Db& db, qint64 chatId, std::optional<qint64> parentId, const Message& message) {
    auto q = db.query("INSERT INTO messages (chat_id, parent_id, role, content, created, status, ttft_ms, "
                      "prompt_tokens, prompt_tps, gen_tokens, gen_tps, stop_reason) "
                      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)");
    // Nothing is generating an imported answer any more.
    const MessageStatus status =
        message.status == MessageStatus::Generating ? MessageStatus::Interrupted : message.status;
    q->bindInt(1, chatId);
    q->bindInt(2, parentId);
    q->bindText(3, roleName(message.role));
    q->bindText(4, message.content);
    q->bindInt(5, toStoredTime(message.created));
    q->bindText(6, statusName(status));
    q->bindInt(7, message.stats.ttftMs);
    q->bindInt(8, message.stats.promptTokens);
    q->bindReal(9, message.stats.promptTps);
    q->bindInt(10, message.stats.genTokens);
    q->bindReal(11, message.stats.genTps);
    message.stats.stopReason.isEmpty() ? q->bindNull(12) : q->bindText(12, message.stats.stopReason);
    q->step();
    return db.lastInsertId();
}

// Returns the new chat's id; message ids of the file are mapped to new ones.
qint64 insertImportedChat(Db& db, const ChatRecord& record) {
    const Chat& chat = record.chat;
    auto insert = db.query("INSERT INTO chats (title, created, updated, pinned, system_prompt, settings, model_path) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
    insert->bindText(1, chat.title);
    insert->bindInt(2, toStoredTime(chat.created));
    insert->bindInt(3, toStoredTime(chat.updated));
    insert->bindInt(4, chat.pinned ? 1 : 0);
    insert->bindText(5, chat.options.systemPrompt);
    insert->bindText(6, QString::fromUtf8(QJsonDocument(chat.options.settings).toJson(QJsonDocument::Compact)));
    insert->bindText(7, chat.options.modelPath);
    insert->step();
    const qint64 chatId = db.lastInsertId();

    QHash<qint64, qint64> newIds;
    for (const Message& message : record.messages) {
        const auto parent = message.parentId ? std::optional(newIds.value(*message.parentId)) : std::nullopt;
        newIds.insert(message.id, insertImportedMessage(db, chatId, parent, message));
    }
    // Without a recorded branch, show the last message of the file.
    std::optional<qint64> leaf = chat.activeLeaf;
    if (!leaf && !record.messages.isEmpty())
        leaf = record.messages.last().id;
    auto select = db.query("UPDATE chats SET active_leaf = ?2 WHERE id = ?1");
    select->bindInt(1, chatId);
    select->bindInt(2, leaf ? std::optional(newIds.value(*leaf)) : std::nullopt);
    select->step();
    return chatId;
}

}  // namespace

QList<ChatRecord> ChatStore::loadRecords(std::optional<qint64> chatId) {
    QList<ChatRecord> records;
    if (chatId) {
        records.append({loadChat(*chatId), {}});
    } else {
        static const std::string chatsSql =
            joinSql({"SELECT ", kChatColumns, " FROM chats c WHERE c.deleted IS NULL ORDER BY c.id"});
        auto q = m_db->query(chatsSql);
        while (q->step())
            records.append({readChat(*q), {}});
    }
    static const std::string messagesSql =
        joinSql({"SELECT ", kMessageColumns, " FROM messages m WHERE m.chat_id = ?1 ORDER BY m.id"});
    for (ChatRecord& record : records) {
        auto q = m_db->query(messagesSql);
        q->bindInt(1, record.chat.id);
        // Ids grow, so ordering by id puts every parent before its children.
        while (q->step())
            record.messages.append(readMessage(*q));
    }
    return records;
}

Result<QByteArray> ChatStore::exportChats(ExportFormat format, std::optional<qint64> chatId) {
    const QString what = chatId ? QCoreApplication::translate("ChatStore", "chat %1").arg(*chatId) : QCoreApplication::translate("ChatStore", "all chats");
    return guarded(path(), QCoreApplication::translate("ChatStore", "export %1").arg(what), [&] {
        // One snapshot, so an answer finishing meanwhile cannot leave the export half old, half new.
        Transaction snapshot(*m_db, Transaction::Mode::Deferred);
        const QList<ChatRecord> records = loadRecords(chatId);
        snapshot.commit();
        return format == ExportFormat::Json ? chatsToJson(records) : chatsToMarkdown(records).toUtf8();
    });
}

Result<QList<qint64>> ChatStore::importJson(const QByteArray& json) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "import chats"), [&] {
        const QList<ChatRecord> records = chatsFromJson(json);
        QList<qint64> chatIds;
        Transaction transaction(*m_db);
        for (const ChatRecord& record : records)
            chatIds.append(insertImportedChat(*m_db, record));
        transaction.commit();
        return chatIds;
    });
}

}  // namespace ember::store

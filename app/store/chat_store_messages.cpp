// ChatStore: the message tree (add, siblings, branches) and streaming an answer into it.
#include "app/store/chat_store.h"

#include "app/store/db.h"
#include "app/store/store_error.h"
#include "app/store/store_guard.h"
#include "app/store/store_rows.h"
#include "app/store/transaction.h"

#include <QCoreApplication>

namespace ember::store {
namespace {

QString messageLabel(qint64 messageId) {
    return QCoreApplication::translate("ChatStore", "message %1").arg(messageId);
}

}  // namespace

qint64 ChatStore::insertMessage(qint64 chatId, std::optional<qint64> parentId, Role role, const QString& content,
                                MessageStatus status) {
    loadChat(chatId);  // throws for a missing or deleted chat, with a clearer message than a foreign key
    if (parentId) {
        const Message parent = loadMessage(*parentId);
        if (parent.chatId != chatId)
            throw StoreError(QCoreApplication::translate("ChatStore", "parent %1 belongs to chat %2, not chat %3")
                                 .arg(messageLabel(*parentId))
                                 .arg(parent.chatId)
                                 .arg(chatId));
    }
    const qint64 now = storedNow();
    auto insert = m_db->query("INSERT INTO messages (chat_id, parent_id, role, content, created, status) "
                              "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    insert->bindInt(1, chatId);
    insert->bindInt(2, parentId);
    insert->bindText(3, roleName(role));
    insert->bindText(4, content);
    insert->bindInt(5, now);
    insert->bindText(6, statusName(status));
    insert->step();
    const qint64 id = m_db->lastInsertId();

    // The newest message is the one on screen, and its chat moves to the top of the list.
    auto touch = m_db->query("UPDATE chats SET updated = ?2, active_leaf = ?3 WHERE id = ?1");
    touch->bindInt(1, chatId);
    touch->bindInt(2, now);
    touch->bindInt(3, id);
    touch->step();
    return id;
}

Message ChatStore::loadMessage(qint64 messageId) {
    static const std::string sql = joinSql({"SELECT ", kMessageColumns, " FROM messages m WHERE m.id = ?1"});
    auto q = m_db->query(sql);
    q->bindInt(1, messageId);
    if (!q->step())
        throw StoreError(QCoreApplication::translate("ChatStore", "%1 does not exist").arg(messageLabel(messageId)));
    return readMessage(*q);
}

QList<Message> ChatStore::pathTo(std::optional<qint64> messageId) {
    QList<Message> path;
    if (!messageId)
        return path;
    static const std::string sql = joinSql({
        "WITH RECURSIVE up (id, depth) AS ("
        "  SELECT ?1, 0"
        "  UNION ALL"
        "  SELECT m.parent_id, up.depth + 1 FROM messages m JOIN up ON m.id = up.id WHERE m.parent_id IS NOT NULL"
        ") SELECT ",
        kMessageColumns, " FROM up JOIN messages m ON m.id = up.id ORDER BY up.depth DESC"});
    auto q = m_db->query(sql);
    q->bindInt(1, *messageId);
    while (q->step())
        path.append(readMessage(*q));
    if (path.isEmpty())
        throw StoreError(QCoreApplication::translate("ChatStore", "%1 does not exist").arg(messageLabel(*messageId)));
    return path;
}

Result<qint64> ChatStore::addMessage(qint64 chatId, std::optional<qint64> parentId, Role role,
                                     const QString& content) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "add a message to chat %1").arg(chatId), [&] {
        Transaction transaction(*m_db);
        const qint64 id = insertMessage(chatId, parentId, role, content, MessageStatus::Complete);
        transaction.commit();
        return id;
    });
}

Result<Message> ChatStore::message(qint64 messageId) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "read %1").arg(messageLabel(messageId)),
                   [&] { return loadMessage(messageId); });
}

Result<Siblings> ChatStore::siblings(qint64 messageId) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "list the siblings of %1").arg(messageLabel(messageId)), [&] {
        // IS, not =: the first messages of a chat share a NULL parent.
        auto q = m_db->query("SELECT s.id FROM messages m "
                             "JOIN messages s ON s.chat_id = m.chat_id AND s.parent_id IS m.parent_id "
                             "WHERE m.id = ?1 ORDER BY s.id");
        q->bindInt(1, messageId);
        Siblings siblings;
        while (q->step())
            siblings.ids.append(q->columnInt(0));
        if (siblings.ids.isEmpty())
            throw StoreError(QCoreApplication::translate("ChatStore", "%1 does not exist").arg(messageLabel(messageId)));
        siblings.index = siblings.ids.indexOf(messageId);
        return siblings;
    });
}

Result<QList<Message>> ChatStore::activePath(qint64 chatId) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "read the active branch of chat %1").arg(chatId), [&] {
        Transaction snapshot(*m_db, Transaction::Mode::Deferred);
        QList<Message> path = pathTo(loadChat(chatId).activeLeaf);
        snapshot.commit();
        return path;
    });
}

Result<QList<Message>> ChatStore::selectBranch(qint64 messageId) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "select the branch through %1").arg(messageLabel(messageId)), [&] {
        Transaction transaction(*m_db);
        const Message start = loadMessage(messageId);
        // Down from the chosen message, always to the newest child: the latest answer on that branch.
        auto leafQuery = m_db->query(
            "WITH RECURSIVE down (id, depth) AS ("
            "  SELECT ?1, 0"
            "  UNION ALL"
            "  SELECT (SELECT c.id FROM messages c WHERE c.chat_id = m.chat_id AND c.parent_id = m.id"
            "          ORDER BY c.id DESC LIMIT 1), down.depth + 1"
            "  FROM down JOIN messages m ON m.id = down.id"
            ") SELECT id FROM down WHERE id IS NOT NULL ORDER BY depth DESC LIMIT 1");
        leafQuery->bindInt(1, messageId);
        const qint64 leaf = leafQuery->step() ? leafQuery->columnInt(0) : messageId;

        auto select = m_db->query("UPDATE chats SET active_leaf = ?2 WHERE id = ?1 AND deleted IS NULL");
        select->bindInt(1, start.chatId);
        select->bindInt(2, leaf);
        select->step();
        requireChange(QCoreApplication::translate("ChatStore", "chat %1 does not exist").arg(start.chatId));
        QList<Message> path = pathTo(leaf);
        transaction.commit();
        return path;
    });
}

Result<qint64> ChatStore::beginAssistant(qint64 chatId, std::optional<qint64> parentId) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "begin an answer in chat %1").arg(chatId), [&] {
        Transaction transaction(*m_db);
        const qint64 id = insertMessage(chatId, parentId, Role::Assistant, QString(), MessageStatus::Generating);
        transaction.commit();
        return id;
    });
}

Result<void> ChatStore::updateGenerating(qint64 messageId, const QString& content) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "save the answer so far in %1").arg(messageLabel(messageId)), [&] {
        // One statement, so its own short transaction: a kill loses at most this update.
        auto q = m_db->query("UPDATE messages SET content = ?2 WHERE id = ?1 AND status = 'generating'");
        q->bindInt(1, messageId);
        q->bindText(2, content);
        q->step();
        requireChange(QStringLiteral("%1 is not being generated").arg(messageLabel(messageId)));
    });
}

Result<void> ChatStore::finishAssistant(qint64 messageId, const QString& content, const GenerationStats& stats) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "finish the answer in %1").arg(messageLabel(messageId)), [&] {
        Transaction transaction(*m_db);
        auto finish = m_db->query(
            "UPDATE messages SET content = ?2, status = 'complete', ttft_ms = ?3, prompt_tokens = ?4, "
            "prompt_tps = ?5, gen_tokens = ?6, gen_tps = ?7, stop_reason = ?8 "
            "WHERE id = ?1 AND status = 'generating'");
        finish->bindInt(1, messageId);
        finish->bindText(2, content);
        finish->bindInt(3, stats.ttftMs);
        finish->bindInt(4, stats.promptTokens);
        finish->bindReal(5, stats.promptTps);
        finish->bindInt(6, stats.genTokens);
        finish->bindReal(7, stats.genTps);
        stats.stopReason.isEmpty() ? finish->bindNull(8) : finish->bindText(8, stats.stopReason);
        finish->step();
        requireChange(QStringLiteral("%1 is not being generated").arg(messageLabel(messageId)));

        auto touch =
            m_db->query("UPDATE chats SET updated = ?2 WHERE id = (SELECT chat_id FROM messages WHERE id = ?1)");
        touch->bindInt(1, messageId);
        touch->bindInt(2, storedNow());
        touch->step();
        transaction.commit();
    });
}

}  // namespace ember::store

// ChatStore: opening the file, and the chats themselves. Messages, search and export/import
// live in chat_store_messages.cpp, chat_store_search.cpp and chat_store_transfer.cpp.
#include "app/store/chat_store.h"

#include "app/store/chat_schema.h"
#include "app/store/db.h"
#include "app/store/migrations.h"
#include "app/store/store_guard.h"
#include "app/store/store_rows.h"
#include "app/store/transaction.h"

#include <QCoreApplication>
#include <QJsonDocument>

namespace ember::store {
namespace {

QString settingsText(const ChatOptions& options) {
    return QString::fromUtf8(QJsonDocument(options.settings).toJson(QJsonDocument::Compact));
}

QString chatLabel(qint64 chatId) {
    return QCoreApplication::translate("ChatStore", "chat %1").arg(chatId);
}

}  // namespace

ChatStore::ChatStore(std::unique_ptr<Db> db) : m_db(std::move(db)) {}

ChatStore::~ChatStore() = default;

Result<std::unique_ptr<ChatStore>> ChatStore::open(const QString& path, OpenMode mode) {
    return guarded(path, QCoreApplication::translate("ChatStore", "open"), [&] {
        auto db = std::make_unique<Db>(path);
        const auto steps = chatMigrations();
        refuseNewerSchema(*db, steps.back().version);
        // Only after the version check: switching the journal mode rewrites the file header.
        db->enableWal();
        migrate(*db, steps);
        std::unique_ptr<ChatStore> store(new ChatStore(std::move(db)));
        if (mode == OpenMode::Primary) {
            store->interruptGenerating();
            store->purgeDeleted();
        }
        return store;
    });
}

QString ChatStore::path() const {
    return m_db->path();
}

void ChatStore::interruptGenerating() {
    m_db->query("UPDATE messages SET status = 'interrupted' WHERE status = 'generating'")->step();
}

void ChatStore::purgeDeleted() {
    // One statement: the messages go by cascade in the same statement, so their parent links
    // are checked only once all of them are gone.
    m_db->query("DELETE FROM chats WHERE deleted IS NOT NULL")->step();
}

void ChatStore::requireChange(const QString& errorIfNone) {
    if (m_db->changes() == 0)
        throw StoreError(errorIfNone);
}

Chat ChatStore::loadChat(qint64 chatId) {
    static const std::string sql =
        joinSql({"SELECT ", kChatColumns, " FROM chats c WHERE c.id = ?1 AND c.deleted IS NULL"});
    auto q = m_db->query(sql);
    q->bindInt(1, chatId);
    if (!q->step())
        throw StoreError(QCoreApplication::translate("ChatStore", "%1 does not exist").arg(chatLabel(chatId)));
    return readChat(*q);
}

Result<qint64> ChatStore::createChat(const QString& title, const ChatOptions& options) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "create a chat"), [&] {
        auto q = m_db->query("INSERT INTO chats (title, created, updated, system_prompt, settings, model_path) "
                             "VALUES (?1, ?2, ?2, ?3, ?4, ?5)");
        q->bindText(1, title);
        q->bindInt(2, storedNow());
        q->bindText(3, options.systemPrompt);
        q->bindText(4, settingsText(options));
        q->bindText(5, options.modelPath);
        q->step();
        return m_db->lastInsertId();
    });
}

Result<Chat> ChatStore::chat(qint64 chatId) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "read %1").arg(chatLabel(chatId)), [&] { return loadChat(chatId); });
}

Result<QList<Chat>> ChatStore::listChats() {
    return guarded(path(), QCoreApplication::translate("ChatStore", "list chats"), [&] {
        static const std::string sql = joinSql({"SELECT ", kChatColumns,
                                                " FROM chats c WHERE c.deleted IS NULL "
                                                "ORDER BY c.pinned DESC, c.updated DESC, c.id DESC"});
        QList<Chat> chats;
        auto q = m_db->query(sql);
        while (q->step())
            chats.append(readChat(*q));
        return chats;
    });
}

Result<void> ChatStore::renameChat(qint64 chatId, const QString& title) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "rename %1").arg(chatLabel(chatId)), [&] {
        auto q = m_db->query("UPDATE chats SET title = ?2 WHERE id = ?1 AND deleted IS NULL");
        q->bindInt(1, chatId);
        q->bindText(2, title);
        q->step();
        requireChange(QStringLiteral("%1 does not exist").arg(chatLabel(chatId)));
    });
}

Result<void> ChatStore::setPinned(qint64 chatId, bool pinned) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "%1 %2").arg(pinned ? "pin" : "unpin", chatLabel(chatId)), [&] {
        auto q = m_db->query("UPDATE chats SET pinned = ?2 WHERE id = ?1 AND deleted IS NULL");
        q->bindInt(1, chatId);
        q->bindInt(2, pinned ? 1 : 0);
        q->step();
        requireChange(QStringLiteral("%1 does not exist").arg(chatLabel(chatId)));
    });
}

Result<void> ChatStore::setChatOptions(qint64 chatId, const ChatOptions& options) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "change the options of %1").arg(chatLabel(chatId)), [&] {
        auto q = m_db->query("UPDATE chats SET system_prompt = ?2, settings = ?3, model_path = ?4 "
                             "WHERE id = ?1 AND deleted IS NULL");
        q->bindInt(1, chatId);
        q->bindText(2, options.systemPrompt);
        q->bindText(3, settingsText(options));
        q->bindText(4, options.modelPath);
        q->step();
        requireChange(QStringLiteral("%1 does not exist").arg(chatLabel(chatId)));
    });
}

Result<void> ChatStore::deleteChat(qint64 chatId) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "delete %1").arg(chatLabel(chatId)), [&] {
        auto q = m_db->query("UPDATE chats SET deleted = ?2 WHERE id = ?1 AND deleted IS NULL");
        q->bindInt(1, chatId);
        q->bindInt(2, storedNow());
        q->step();
        requireChange(QStringLiteral("%1 does not exist").arg(chatLabel(chatId)));
    });
}

Result<void> ChatStore::restoreChat(qint64 chatId) {
    return guarded(path(), QCoreApplication::translate("ChatStore", "restore %1").arg(chatLabel(chatId)), [&] {
        auto q = m_db->query("UPDATE chats SET deleted = NULL WHERE id = ?1 AND deleted IS NOT NULL");
        q->bindInt(1, chatId);
        q->step();
        requireChange(QStringLiteral("%1 is not a deleted chat").arg(chatLabel(chatId)));
    });
}

Result<void> ChatStore::purgeDeletedChats() {
    return guarded(path(), QCoreApplication::translate("ChatStore", "purge deleted chats"), [&] { purgeDeleted(); });
}

}  // namespace ember::store

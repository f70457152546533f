#pragma once
// The chat history: chats and their message trees in one SQLite file.
//
// One ChatStore is one connection, used from one thread. The GUI thread opens the primary one;
// bulk work (search, export, import) may run on a worker with its own OpenMode::Worker store on
// the same file. Every call returns a Result; its error names the file and the operation.
//
// Streaming: beginAssistant() writes the answer's row at once (status generating),
// updateGenerating() saves the text so far (every few hundred ms), finishAssistant() stores the
// final text and statistics. If the app dies in between, the next primary open marks the row
// interrupted and keeps what had been saved.

#include "app/store/chat_types.h"
#include "app/store/result.h"

#include <QByteArray>
#include <QList>
#include <QString>

#include <memory>
#include <optional>

namespace ember::store {

class Db;

class ChatStore {
public:
    enum class OpenMode {
        // The app's own store: also marks answers left generating by a crash as interrupted and
        // purges chats deleted (and not restored) in an earlier session.
        Primary,
        // A second connection beside a running primary: leaves those rows alone, since the
        // primary may be streaming into them right now.
        Worker,
    };

    // Creates the file and its schema when missing, upgrades an older schema, and refuses one
    // newer than this code without changing a byte of the file.
    static Result<std::unique_ptr<ChatStore>> open(const QString& path, OpenMode mode = OpenMode::Primary);
    ~ChatStore();
    ChatStore(const ChatStore&) = delete;
    ChatStore& operator=(const ChatStore&) = delete;

    QString path() const;

    // --- Chats -----------------------------------------------------------------------------
    Result<qint64> createChat(const QString& title, const ChatOptions& options = {});
    Result<Chat> chat(qint64 chatId);
    // Live chats, pinned first, then most recently updated first (see chatListSection()).
    Result<QList<Chat>> listChats();
    Result<void> renameChat(qint64 chatId, const QString& title);
    Result<void> setPinned(qint64 chatId, bool pinned);
    Result<void> setChatOptions(qint64 chatId, const ChatOptions& options);
    // Delete with undo: the chat disappears from lists and search until restoreChat(), and is
    // purged by purgeDeletedChats() or the next primary open.
    Result<void> deleteChat(qint64 chatId);
    Result<void> restoreChat(qint64 chatId);
    Result<void> purgeDeletedChats();

    // --- Messages ----------------------------------------------------------------------------
    // Adds a complete message under `parentId` (none: a new start of the conversation) and makes
    // it the end of the chat's active branch. Edits add a sibling of the edited message.
    Result<qint64> addMessage(qint64 chatId, std::optional<qint64> parentId, Role role, const QString& content);
    Result<Message> message(qint64 messageId);
    Result<Siblings> siblings(qint64 messageId);
    // Root to the end of the branch on screen.
    Result<QList<Message>> activePath(qint64 chatId);
    // Shows the branch through `messageId` (a sibling picked with ◀ ▶), down to its newest
    // descendant, and returns that branch from the root.
    Result<QList<Message>> selectBranch(qint64 messageId);

    // --- Streaming an answer --------------------------------------------------------------------
    Result<qint64> beginAssistant(qint64 chatId, std::optional<qint64> parentId);
    // `content` is the whole answer so far.
    Result<void> updateGenerating(qint64 messageId, const QString& content);
    Result<void> finishAssistant(qint64 messageId, const QString& content, const GenerationStats& stats);

    // --- Search, export, import -------------------------------------------------------------------
    // Words of `text` must all occur (the last one as a prefix, for search as you type); best
    // matches first. Snippets mark matches with kMatchStart / kMatchEnd.
    Result<QList<SearchHit>> search(const QString& text, int limit = 50);
    // One chat, or every live chat when chatId is empty. Markdown holds the branch on screen, as
    // read; JSON holds whole trees with statistics, for importJson().
    Result<QByteArray> exportChats(ExportFormat format, std::optional<qint64> chatId = std::nullopt);
    // Adds the chats of a JSON export as new chats, all or none; returns their ids in file order.
    Result<QList<qint64>> importJson(const QByteArray& json);

private:
    explicit ChatStore(std::unique_ptr<Db> db);
    // Bodies shared by the public calls; they throw StoreError.
    void interruptGenerating();
    void purgeDeleted();
    Chat loadChat(qint64 chatId);
    Message loadMessage(qint64 messageId);
    QList<Message> pathTo(std::optional<qint64> messageId);
    qint64 insertMessage(qint64 chatId, std::optional<qint64> parentId, Role role, const QString& content,
                         MessageStatus status);
    QList<ChatRecord> loadRecords(std::optional<qint64> chatId);
    // Throws errorIfNone when the last statement changed no row.
    void requireChange(const QString& errorIfNone);

    std::unique_ptr<Db> m_db;
};

}  // namespace ember::store

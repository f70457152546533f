#pragma once
// The chat history around the open conversation: the conversation list, opening, renaming,
// pinning and deleting chats, search, export and import. What a chat holds and how it goes on is
// ChatController's; this one chooses which chat it shows.

#include <QObject>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

#include "app/chat/conversation_list_model.h"
#include "app/chat/search_hit_model.h"
#include "app/store/chat_types.h"

class QQmlEngine;
class QJSEngine;

namespace ember::store {
class ChatStore;
}

namespace ember::app {

class AppSettings;
class ChatController;

class HistoryController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

    Q_PROPERTY(ember::app::ConversationListModel* conversations READ conversations CONSTANT)
    Q_PROPERTY(ember::app::SearchHitModel* searchHits READ search_hits CONSTANT)
    // What the last export or import did ("Exported 2 chats as JSON to …") or why it failed.
    Q_PROPERTY(QString transferMessage READ transfer_message NOTIFY transferMessageChanged)

public:
    // store may be null (history could not be opened): the list stays empty. app_settings may be
    // null (tests): the chat open at the last close is not known. Store failures are shown
    // through chat's historyError.
    HistoryController(ChatController* chat, store::ChatStore* store, AppSettings* app_settings = nullptr,
                      QObject* parent = nullptr);

    static HistoryController* create(QQmlEngine*, QJSEngine*);
    static void set_instance(HistoryController* controller);

    ConversationListModel* conversations() { return &conversations_; }
    SearchHitModel* search_hits() { return &search_hits_; }
    QString transfer_message() const { return transfer_message_; }

    // Fills the conversation list and shows the chat open when the app last closed (else the
    // one at the top of the list), if any.
    void open_latest_chat();

    // None of these changes the open chat while an answer is generating.
    Q_INVOKABLE void openChat(qint64 id);
    Q_INVOKABLE void renameChat(qint64 id, const QString& title);
    Q_INVOKABLE void togglePin(qint64 id);
    // Hidden until undoDelete() or the next start; chatDeleted() offers the undo.
    Q_INVOKABLE void deleteChat(qint64 id);
    Q_INVOKABLE void undoDelete();
    Q_INVOKABLE void search(const QString& text);
    // Opens the chat of a search hit on the branch holding the matching message.
    Q_INVOKABLE void openSearchHit(int row);
    // The open chat (allChats false) or every chat to `path`: JSON for a ".json" name, to import
    // back, else Markdown. Adds the chats of a JSON export and opens the first. Both say what
    // happened in transferMessage; false on failure.
    Q_INVOKABLE bool exportChats(const QString& path, bool allChats);
    Q_INVOKABLE bool importChats(const QString& path);
    // The same through the platform's file dialog.
    Q_INVOKABLE void chooseExportFile(bool allChats);
    Q_INVOKABLE void chooseImportFile();

    // A finished conversation held elsewhere (the API server's), added to the history as a chat
    // of its own; the open chat is left as it is. False (and the history's error shown) on failure.
    bool add_chat(const QString& title, const store::ChatOptions& options,
                  const QList<QPair<store::Role, QString>>& turns);

signals:
    void chatDeleted(const QString& title);
    void transferMessageChanged();

private:
    void refresh_conversations();
    void set_transfer_message(const QString& message);

    ChatController* chat_;
    store::ChatStore* store_;
    AppSettings* app_settings_;
    ConversationListModel conversations_;
    SearchHitModel search_hits_;
    QTimer list_timer_;  // refreshes the conversation list after a question is saved
    QString transfer_message_;
    qint64 deleted_id_ = 0;  // the chat deleteChat() hid last, for undoDelete()
    bool deleted_was_open_ = false;
};

}  // namespace ember::app

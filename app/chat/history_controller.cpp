#include "app/chat/history_controller.h"

#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QJSEngine>

#include <algorithm>
#include <utility>

#include "app/chat/chat_controller.h"
#include "app/chat/chat_files.h"
#include "app/settings/app_settings.h"
#include "app/store/chat_store.h"

namespace ember::app {
namespace {

HistoryController* g_instance = nullptr;

// A new question's chat shows in the list one flush of the answer later, so the frame that shows
// the question does not also lay out the list (measured: 2-3 ms of a 17 ms frame).
constexpr int kListDelayMs = 33;

}  // namespace

HistoryController::HistoryController(ChatController* chat, store::ChatStore* store, AppSettings* app_settings,
                                     QObject* parent)
    : QObject(parent), chat_(chat), store_(store), app_settings_(app_settings) {
    list_timer_.setSingleShot(true);
    list_timer_.setInterval(kListDelayMs);
    connect(&list_timer_, &QTimer::timeout, this, &HistoryController::refresh_conversations);
    connect(chat_, &ChatController::questionSaved, &list_timer_, qOverload<>(&QTimer::start));
    connect(chat_, &ChatController::chatUpdated, this, &HistoryController::refresh_conversations);
}

HistoryController* HistoryController::create(QQmlEngine*, QJSEngine*) {
    Q_ASSERT(g_instance);
    QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
    return g_instance;
}

void HistoryController::set_instance(HistoryController* controller) { g_instance = controller; }

void HistoryController::refresh_conversations() {
    list_timer_.stop();
    if (!store_) return;
    auto chats = store_->listChats();
    if (chat_->saved(chats)) conversations_.sync(chats.value(), QDateTime::currentDateTime());
}

bool HistoryController::add_chat(const QString& title, const store::ChatOptions& options,
                                 const QList<QPair<store::Role, QString>>& turns) {
    if (!store_) return false;
    auto chat = store_->createChat(title, options);
    if (!chat_->saved(chat)) return false;
    std::optional<qint64> parent;
    for (const auto& [role, text] : turns) {
        auto id = store_->addMessage(chat.value(), parent, role, text);
        if (!chat_->saved(id)) return false;
        parent = id.value();
    }
    refresh_conversations();
    return true;
}

void HistoryController::open_latest_chat() {
    refresh_conversations();
    const auto& rows = conversations_.rows();
    if (rows.isEmpty()) return;
    // The chat open when the app closed; without one (or if it is gone), the top of the list.
    const qint64 last = app_settings_ ? app_settings_->last_chat() : 0;
    const bool known = std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r.id == last; });
    openChat(known ? last : rows.front().id);
}

void HistoryController::openChat(qint64 id) {
    if (chat_->generating() || !store_) return;
    auto chat = store_->chat(id);
    if (!chat_->saved(chat)) return;
    auto path = store_->activePath(id);
    if (chat_->saved(path)) chat_->show_chat(chat.value(), path.value());
}

void HistoryController::renameChat(qint64 id, const QString& title) {
    const QString t = title.simplified();
    if (!store_ || t.isEmpty()) return;
    if (chat_->saved(store_->renameChat(id, t))) refresh_conversations();
}

void HistoryController::togglePin(qint64 id) {
    if (!store_) return;
    for (const ConversationRow& row : conversations_.rows()) {
        if (row.id != id) continue;
        if (chat_->saved(store_->setPinned(id, !row.pinned))) refresh_conversations();
        return;
    }
}

void HistoryController::deleteChat(qint64 id) {
    if (!store_ || (chat_->generating() && id == chat_->chat_id())) return;
    QString title;
    for (const ConversationRow& row : conversations_.rows())
        if (row.id == id) title = row.title;
    if (!chat_->saved(store_->deleteChat(id))) return;
    deleted_id_ = id;
    deleted_was_open_ = id == chat_->chat_id();
    if (deleted_was_open_) chat_->newChat();
    refresh_conversations();
    emit chatDeleted(title);
}

void HistoryController::undoDelete() {
    if (!store_ || deleted_id_ == 0) return;
    const qint64 id = std::exchange(deleted_id_, 0);
    if (!chat_->saved(store_->restoreChat(id))) return;
    refresh_conversations();
    // Undo puts things back as they were: the chat on screen again if it was open, and nothing
    // new has been typed since.
    if (deleted_was_open_ && chat_->chat_id() == 0 && chat_->messages()->rowCount() == 0) openChat(id);
}

void HistoryController::search(const QString& text) {
    if (!store_ || text.trimmed().isEmpty()) {
        search_hits_.set_hits({});
        return;
    }
    auto hits = store_->search(text);
    search_hits_.set_hits(chat_->saved(hits) ? hits.value() : QList<store::SearchHit>{});
}

void HistoryController::openSearchHit(int row) {
    if (chat_->generating() || !store_ || row < 0 || row >= search_hits_.rowCount()) return;
    const store::SearchHit hit = search_hits_.hits()[row];
    auto chat = store_->chat(hit.chatId);
    if (!chat_->saved(chat)) return;
    auto path = store_->selectBranch(hit.messageId);
    if (chat_->saved(path)) chat_->show_chat(chat.value(), path.value(), hit.messageId);
}

void HistoryController::set_transfer_message(const QString& message) {
    transfer_message_ = message;
    emit transferMessageChanged();
}

bool HistoryController::exportChats(const QString& path, bool allChats) {
    const qint64 open = chat_->chat_id();
    if (!store_ || (!allChats && open == 0)) {
        set_transfer_message(store_ ? tr("Nothing to export: this chat is not saved yet") : tr("No history to export"));
        return false;
    }
    auto what = export_chats_to_file(*store_, path, allChats ? std::nullopt : std::optional<qint64>(open));
    set_transfer_message(what ? tr("Exported %1 to %2").arg(what.value(), path) : tr("Export failed: %1").arg(what.error()));
    return what.ok();
}

bool HistoryController::importChats(const QString& path) {
    if (!store_ || chat_->generating()) return false;
    auto ids = import_chats_from_file(*store_, path);
    if (!ids) set_transfer_message(tr("Import failed: %1").arg(ids.error()));
    else set_transfer_message(ids.value().size() == 1 ? tr("Imported 1 chat from %1").arg(path)
                                                       : tr("Imported %1 chats from %2").arg(ids.value().size()).arg(path));
    if (!ids) return false;
    refresh_conversations();
    if (!ids.value().isEmpty()) openChat(ids.value().first());
    return true;
}

void HistoryController::chooseExportFile(bool allChats) {
    QString filter;
    QString path = QFileDialog::getSaveFileName(nullptr, allChats ? tr("Export all chats") : tr("Export this chat"),
                                                QDir::homePath() + (allChats ? QStringLiteral("/chats.md") : QStringLiteral("/chat.md")),
                                                tr("Markdown (*.md);;JSON, to import back (*.json)"), &filter);
    if (path.isEmpty()) return;
    // The chosen filter decides the format, whatever the default name's suffix still says.
    const QString suffix = filter.contains(QLatin1String("*.json")) ? QStringLiteral("json") : QStringLiteral("md");
    const QFileInfo chosen(path);
    const QString had = chosen.suffix().toLower();
    if (had == QLatin1String("md") || had == QLatin1String("json"))
        path = chosen.path() + QLatin1Char('/') + chosen.completeBaseName() + QLatin1Char('.') + suffix;
    else
        path += QLatin1Char('.') + suffix;
    exportChats(path, allChats);
}

void HistoryController::chooseImportFile() {
    const QString path = QFileDialog::getOpenFileName(nullptr, tr("Import chats"), QDir::homePath(),
                                                      tr("Ember chat export (*.json)"));
    if (!path.isEmpty()) importChats(path);
}

}  // namespace ember::app

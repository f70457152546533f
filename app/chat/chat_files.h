#pragma once
// Chats to and from files the user picks: Markdown to read, JSON to import back (ChatStore's
// exportChats/importJson). The file is written whole or not at all (QSaveFile), so a full disk
// or a cancelled write never leaves half an export under the chosen name.

#include <QList>
#include <QString>

#include <optional>

#include "app/store/result.h"

namespace ember::store {
class ChatStore;
}

namespace ember::app {

// ".json" exports JSON, anything else Markdown. chat_id empty: every chat. Returns what was
// written, for the user: "2 chats as JSON".
store::Result<QString> export_chats_to_file(store::ChatStore& store, const QString& path, std::optional<qint64> chat_id);

// Adds the chats of a JSON export; all or none. Returns their new ids in file order.
store::Result<QList<qint64>> import_chats_from_file(store::ChatStore& store, const QString& path);

}  // namespace ember::app

#pragma once
// Chats as JSON: the export that imports back without loss (whole message trees, statistics,
// options). The file is {"format": "ember-chats", "version": 1, "chats": [ … ]}; times are ISO 8601
// in UTC with milliseconds. Message ids and parents are the file's own numbering, mapped to new
// ids on import.

#include "app/store/chat_types.h"

#include <QByteArray>

namespace ember::store {

inline constexpr int kChatJsonVersion = 1;

QByteArray chatsToJson(const QList<ChatRecord>& records);

// Reads and checks a whole export before anything is written. Throws StoreError naming the first
// bad field by its JSON path (chats[2].messages[5].role) and the value found there.
QList<ChatRecord> chatsFromJson(const QByteArray& json);

}  // namespace ember::store

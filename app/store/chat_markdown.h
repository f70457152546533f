#pragma once
// Chats as Markdown, for reading and sharing: each chat's branch on screen, one section per
// message. Lossy by design; JSON (chat_json.h) is the format that round-trips.

#include "app/store/chat_types.h"

namespace ember::store {

QString chatsToMarkdown(const QList<ChatRecord>& records);

}  // namespace ember::store

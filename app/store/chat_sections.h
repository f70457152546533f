#pragma once
// The headings of the conversation list.

#include "app/store/chat_types.h"

namespace ember::store {

// "Pinned" for a pinned chat; otherwise by the local calendar day of its last update: "Today",
// "Yesterday", "Previous 7 days", then one heading per month ("March 2025"). In the order of
// ChatStore::listChats() each heading's chats sit together. Translated through
// QCoreApplication::translate (context "ChatSections").
QString chatListSection(const Chat& chat, const QDateTime& now);

}  // namespace ember::store

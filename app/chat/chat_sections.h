#pragma once
// The headings of the conversation list: translated words, so they belong to the app, not to
// the store that hands out the chats.

#include <QDateTime>
#include <QString>

#include "app/store/chat_types.h"

namespace ember::app {

// "Pinned" for a pinned chat; otherwise by the local calendar day of its last update: "Today",
// "Yesterday", "Previous 7 days", then one heading per month ("March 2025"). In the order of
// ChatStore::listChats() each heading's chats sit together.
QString chat_list_section(const store::Chat& chat, const QDateTime& now);

}  // namespace ember::app

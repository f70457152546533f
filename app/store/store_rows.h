#pragma once
// Rows to values: the column lists ChatStore selects, and the readers that turn a result row
// back into a Chat or a Message. Shared by the ChatStore source files; not for outside use.

#include "app/store/chat_types.h"

#include <initializer_list>
#include <string>
#include <string_view>

namespace ember::store {

class Statement;

// Columns read by readChat, on table alias c.
inline constexpr std::string_view kChatColumns =
    "c.id, c.title, c.created, c.updated, c.pinned, c.system_prompt, c.settings, c.model_path, c.active_leaf";
// Columns read by readMessage, on table alias m.
inline constexpr std::string_view kMessageColumns =
    "m.id, m.chat_id, m.parent_id, m.role, m.content, m.created, m.status, m.ttft_ms, m.prompt_tokens, "
    "m.prompt_tps, m.gen_tokens, m.gen_tps, m.stop_reason";

// SQL text put together from literals and the column lists above (never from values).
std::string joinSql(std::initializer_list<std::string_view> parts);

// Both read from column 0 of the current row; they throw on a value no code could have written.
Chat readChat(const Statement& row);
Message readMessage(const Statement& row);

qint64 toStoredTime(const QDateTime& time);
QDateTime fromStoredTime(qint64 msSinceEpoch);
qint64 storedNow();

}  // namespace ember::store

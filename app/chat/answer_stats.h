#pragma once
// An answer's statistics as the history keeps them and as the chat shows them under the answer.

#include <QString>

#include "app/engine/generation_stats.h"
#include "app/store/chat_types.h"

namespace ember::app {

// The stop reason as saved: the same words older versions saved ("context full", "stopped"…),
// so chats keep reading the same; not translated.
QString stop_reason_text(GenerationStats::StopReason reason);

store::GenerationStats stored_stats(const GenerationStats& stats);
// A failed answer: the reason saved is "error: " and what went wrong.
store::GenerationStats failed_stats(const QString& error);

// "12 tokens · 30.5 tok/s · prompt 8 tokens at 90.0 tok/s · first token 40 ms · end of generation"
// (the stop reason alone when nothing was generated).
QString stats_line(const store::GenerationStats& stats);

}  // namespace ember::app

#pragma once
// The JSON shapes of completion answers as OpenAI clients read them: whole answers
// (chat.completion, text_completion), streamed chunks (chat.completion.chunk), usage, and
// llama.cpp's server's `timings`.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "server/generation_queue.h"

namespace ember::server {

struct AnswerHeader {
    bool chat = false;
    std::string id;     // "chatcmpl-…" or "cmpl-…"
    int64_t created = 0;  // Unix seconds
    std::string model;
};

nlohmann::json usage_json(const Outcome& o);
nlohmann::json timings_json(const Outcome& o);

// The whole answer of a request that did not stream.
nlohmann::json answer_json(const AnswerHeader& h, const std::string& text, const Outcome& o);

// One streamed chunk: `text` as the next piece of the answer; for a chat, `role` on the first;
// the last has a finish_reason (and timings).
nlohmann::json chunk_json(const AnswerHeader& h, const std::string& text, bool role = false,
                          const Outcome* last = nullptr);
// The chunk after the last when the client asked for usage: no choices, only usage.
nlohmann::json usage_chunk_json(const AnswerHeader& h, const Outcome& o);

// JSON text that survives invalid UTF-8 in what it carries (replaced by U+FFFD).
std::string dump(const nlohmann::json& j);

}  // namespace ember::server

#include "server/completion_json.h"

namespace ember::server {
namespace {

using nlohmann::json;

json header_json(const AnswerHeader& h, bool chunk) {
    const char* object = h.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
    return json{{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}};
}

json finish(const Outcome& o) { return o.finish_reason == "cancelled" ? json(nullptr) : json(o.finish_reason); }

double per_second(int32_t n, double ms) { return ms > 0 ? 1000.0 * n / ms : 0.0; }

}  // namespace

json usage_json(const Outcome& o) {
    return json{{"prompt_tokens", o.prompt_tokens},
                {"completion_tokens", o.completion_tokens},
                {"total_tokens", o.prompt_tokens + o.completion_tokens},
                {"prompt_tokens_details", {{"cached_tokens", o.cached_tokens}}}};
}

json timings_json(const Outcome& o) {
    const Timings& t = o.timings;
    return json{{"cache_n", o.cached_tokens},
                {"prompt_n", t.n_prompt},
                {"prompt_ms", t.prompt_ms},
                {"prompt_per_second", per_second(t.n_prompt, t.prompt_ms)},
                {"predicted_n", t.n_generated},
                {"predicted_ms", t.generate_ms},
                {"predicted_per_second", per_second(t.n_generated, t.generate_ms)},
                {"first_token_ms", t.first_token_ms}};
}

json answer_json(const AnswerHeader& h, const std::string& text, const Outcome& o) {
    json choice{{"index", 0}, {"finish_reason", finish(o)}, {"logprobs", nullptr}};
    if (h.chat) choice["message"] = json{{"role", "assistant"}, {"content", text}};
    else choice["text"] = text;
    json j = header_json(h, false);
    j["choices"] = json::array({choice});
    j["usage"] = usage_json(o);
    j["timings"] = timings_json(o);
    return j;
}

json chunk_json(const AnswerHeader& h, const std::string& text, bool role, const Outcome* last) {
    json choice{{"index", 0}, {"finish_reason", last ? finish(*last) : json(nullptr)}, {"logprobs", nullptr}};
    if (h.chat) {
        json delta = json::object();
        if (role) delta["role"] = "assistant";
        if (role || !text.empty()) delta["content"] = text;
        choice["delta"] = delta;
    } else {
        choice["text"] = text;
    }
    json j = header_json(h, true);
    j["choices"] = json::array({choice});
    if (last) j["timings"] = timings_json(*last);
    return j;
}

json usage_chunk_json(const AnswerHeader& h, const Outcome& o) {
    json j = header_json(h, true);
    j["choices"] = json::array();
    j["usage"] = usage_json(o);
    return j;
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace ember::server

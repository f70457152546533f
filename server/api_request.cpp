#include "server/api_request.h"

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

namespace ember::server {
namespace {

using nlohmann::json;

struct TooDeep {};

const json* field(const json& body, const char* name) {
    const auto it = body.find(name);
    return it == body.end() || it->is_null() ? nullptr : &*it;
}

std::optional<ApiError> read_number(const json& body, const char* name, double lo, double hi, float& out) {
    const json* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_number()) return bad_field(name, "must be a number");
    const double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi)
        return bad_field(name, "must be between " + json(lo).dump() + " and " + json(hi).dump() + ", not " + v->dump());
    out = float(d);
    return std::nullopt;
}

std::optional<ApiError> read_int(const json& body, const char* name, int64_t lo, int64_t hi, int64_t& out) {
    const json* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) return bad_field(name, "must be an integer");
    const bool in_range = v->is_number_unsigned()
                              ? v->get<uint64_t>() <= uint64_t(hi) && (lo <= 0 || v->get<uint64_t>() >= uint64_t(lo))
                              : v->get<int64_t>() >= lo && v->get<int64_t>() <= hi;
    if (!in_range)
        return bad_field(name, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", not " +
                                   v->dump());
    out = v->get<int64_t>();
    return std::nullopt;
}

std::optional<ApiError> read_bool(const json& body, const char* name, bool& out) {
    const json* v = field(body, name);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) return bad_field(name, "must be true or false");
    out = v->get<bool>();
    return std::nullopt;
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts.
Parsed<std::string> message_content(const json& content, const std::string& where) {
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) return bad_field(where, "must be a string or an array of text parts");
    std::string text;
    for (size_t i = 0; i < content.size(); ++i) {
        const json& part = content[i];
        const std::string at = where + "[" + std::to_string(i) + "]";
        if (!part.is_object() || part.value("type", json()) != "text" || !part.contains("text") || !part["text"].is_string())
            return bad_field(at, "only {\"type\": \"text\", \"text\": string} parts are supported");
        text += part["text"].get<std::string>();
    }
    return text;
}

Parsed<std::vector<chat::Message>> read_messages(const json& body) {
    const json* v = field(body, "messages");
    if (!v) return bad_field("messages", "is required");
    if (!v->is_array() || v->empty()) return bad_field("messages", "must be a non-empty array");
    std::vector<chat::Message> out;
    for (size_t i = 0; i < v->size(); ++i) {
        const json& m = (*v)[i];
        const std::string at = "messages[" + std::to_string(i) + "]";
        if (!m.is_object()) return bad_field(at, "must be an object with role and content");
        const json* role = field(m, "role");
        if (!role || !role->is_string()) return bad_field(at + ".role", "must be a string");
        std::string r = role->get<std::string>();
        if (r == "developer") r = "system";  // OpenAI's newer name for the system message
        if (r != "system" && r != "user" && r != "assistant")
            return bad_field(at + ".role", "must be system, developer, user or assistant, not \"" + role->get<std::string>() + "\"");
        const json* content = field(m, "content");
        if (!content) return bad_field(at + ".content", "is required");
        auto text = message_content(*content, at + ".content");
        if (auto* e = std::get_if<ApiError>(&text)) return *e;
        out.push_back({std::move(r), std::move(std::get<std::string>(text))});
    }
    return out;
}

// A completion's prompt: a string, an array of one string, or an array of token ids.
std::optional<ApiError> read_prompt(const json& body, CompletionRequest& r) {
    const json* v = field(body, "prompt");
    if (!v) return bad_field("prompt", "is required");
    if (v->is_string()) {
        r.prompt = v->get<std::string>();
        return std::nullopt;
    }
    if (v->is_array() && v->size() == 1 && (*v)[0].is_string()) {
        r.prompt = (*v)[0].get<std::string>();
        return std::nullopt;
    }
    if (v->is_array() && !v->empty()) {
        std::vector<int32_t> ids;
        for (const json& t : *v) {
            if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() > std::numeric_limits<int32_t>::max())
                return bad_field("prompt", "must be a string, an array of one string, or an array of token ids");
            ids.push_back(int32_t(t.get<int64_t>()));
        }
        r.prompt_tokens = std::move(ids);
        return std::nullopt;
    }
    return bad_field("prompt", "must be a string, an array of one string, or an array of token ids");
}

std::optional<ApiError> read_stop(const json& body, std::vector<std::string>& out) {
    const json* v = field(body, "stop");
    if (!v) return std::nullopt;
    if (v->is_string()) {
        out.push_back(v->get<std::string>());
        return std::nullopt;
    }
    if (!v->is_array() || v->size() > kMaxStops)
        return bad_field("stop", "must be a string or an array of at most " + std::to_string(kMaxStops) + " strings");
    for (const json& s : *v) {
        if (!s.is_string()) return bad_field("stop", "must be a string or an array of strings");
        out.push_back(s.get<std::string>());
    }
    return std::nullopt;
}

}  // namespace

Parsed<json> parse_json_body(std::string_view body) {
    try {
        return json::parse(body, [](int depth, json::parse_event_t, json&) {
            if (depth > kMaxJsonDepth) throw TooDeep{};
            return true;
        });
    } catch (const TooDeep&) {
        ApiError e;
        e.message = "the request body nests deeper than " + std::to_string(kMaxJsonDepth) + " levels";
        return e;
    } catch (const json::exception& ex) {
        ApiError e;
        e.message = std::string("the request body is not valid JSON: ") + ex.what();
        return e;
    }
}

Parsed<CompletionRequest> parse_completion_request(const json& body, bool chat, uint64_t random_seed) {
    if (!body.is_object()) {
        ApiError e;
        e.message = "the request body must be a JSON object";
        return e;
    }
    CompletionRequest r;
    r.chat = chat;
    if (const json* m = field(body, "model")) {
        if (!m->is_string()) return bad_field("model", "must be a string");
        r.model = m->get<std::string>();
    }
    if (chat) {
        auto messages = read_messages(body);
        if (auto* e = std::get_if<ApiError>(&messages)) return *e;
        r.messages = std::move(std::get<std::vector<chat::Message>>(messages));
    } else if (auto e = read_prompt(body, r)) {
        return *e;
    }
    int64_t n = 1;
    if (auto e = read_int(body, "n", 1, 1, n)) {
        e->message = "n: only one choice per request is supported (n = 1)";
        return *e;
    }
    // OpenAI's chat API renamed max_tokens; llama.cpp's server calls it n_predict.
    for (const char* name : {"max_tokens", "max_completion_tokens", "n_predict"}) {
        int64_t max_tokens = -1;
        if (auto e = read_int(body, name, 1, std::numeric_limits<int32_t>::max(), max_tokens)) return *e;
        if (field(body, name)) r.max_tokens = int32_t(max_tokens);
    }
    SamplingParams& s = r.sampling;
    if (auto e = read_number(body, "temperature", 0.0, 100.0, s.temperature)) return *e;
    if (auto e = read_number(body, "top_p", 0.0, 1.0, s.top_p)) return *e;
    if (auto e = read_number(body, "min_p", 0.0, 1.0, s.min_p)) return *e;
    if (auto e = read_number(body, "repeat_penalty", 0.01, 100.0, s.repeat_penalty)) return *e;
    int64_t top_k = s.top_k;
    if (auto e = read_int(body, "top_k", 0, std::numeric_limits<int32_t>::max(), top_k)) return *e;
    s.top_k = int32_t(top_k);
    int64_t seed = -1;
    if (auto e = read_int(body, "seed", -1, std::numeric_limits<int64_t>::max(), seed)) return *e;
    s.seed = seed < 0 ? random_seed : uint64_t(seed);
    if (auto e = read_stop(body, r.stop)) return *e;
    if (auto e = read_bool(body, "stream", r.stream)) return *e;
    if (auto e = read_bool(body, "ignore_eos", r.ignore_eos)) return *e;
    if (const json* opts = field(body, "stream_options")) {
        if (!opts->is_object()) return bad_field("stream_options", "must be an object");
        if (auto e = read_bool(*opts, "include_usage", r.include_usage)) {
            e->param = "stream_options.include_usage";
            e->message = "stream_options." + e->message;
            return *e;
        }
    }
    return r;
}

}  // namespace ember::server

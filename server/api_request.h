#pragma once
// The body of POST /v1/chat/completions and /v1/completions, checked field by field as the
// OpenAI API defines them (with llama.cpp's server's sampling extensions: top_k, min_p,
// repeat_penalty, ignore_eos). Unknown fields are ignored, as clients send many; a known field of
// the wrong type or out of range is an error naming it.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "chat_template/chat_template.h"
#include "ember/sampling_params.h"
#include "server/api_error.h"

namespace ember::server {

template <class T>
using Parsed = std::variant<T, ApiError>;

inline constexpr int kMaxJsonDepth = 32;  // deeper bodies are refused before they are built
inline constexpr size_t kMaxStops = 16;

struct CompletionRequest {
    bool chat = false;
    std::string model;                   // as the client named it; empty when not given
    std::vector<chat::Message> messages; // chat: at least one
    std::string prompt;                  // completion, as text
    std::optional<std::vector<int32_t>> prompt_tokens;  // completion, as token ids instead
    int32_t max_tokens = -1;             // -1: until the end of generation or a full context
    SamplingParams sampling;
    std::vector<std::string> stop;
    bool stream = false;
    bool include_usage = false;          // stream_options.include_usage
    bool ignore_eos = false;
};

// Parses JSON with at most kMaxJsonDepth levels of nesting; an error says where it is malformed.
Parsed<nlohmann::json> parse_json_body(std::string_view body);

// `random_seed` is used when the request names no seed (or -1).
Parsed<CompletionRequest> parse_completion_request(const nlohmann::json& body, bool chat, uint64_t random_seed);

}  // namespace ember::server

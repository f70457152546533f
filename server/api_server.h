#pragma once
// The OpenAI-compatible HTTP API over one model: GET /health, /v1/models, /metrics;
// POST /v1/chat/completions, /v1/completions (whole or as Server-Sent Events), /tokenize,
// /detokenize. HTTP is cpp-httplib's; this class holds the routes, the key check and the limits.
// It answers from the moment it listens: 503 until serve() hands it a model.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "chat_template/chat_template.h"
#include "ember/result.h"
#include "server/generation_queue.h"

namespace ember::server {

struct ServerOptions {
    std::string host = "127.0.0.1";
    int port = 8080;                       // 0: any free port (port() says which)
    std::string api_key;                   // required for a host other than loopback
    size_t max_body_bytes = 8u << 20;      // larger bodies get 413
    int read_timeout_seconds = 10;         // a client silent this long mid-request is dropped
    int connections = 32;                  // served at once; more wait to be accepted
};

// A completion request as it finished, for a live view of what the server does.
struct RequestRecord {
    std::string path;
    int status = 200;
    bool stream = false;
    std::string finish_reason;  // empty for a refused request
    int32_t prompt_tokens = 0;
    int32_t completion_tokens = 0;
    double tokens_per_second = 0.0;
    std::string error;          // the message, for a refused or failed request
    std::vector<chat::Message> messages;  // a chat's messages as the client sent them
    std::string answer;                   // the text sent back
};

bool is_loopback(const std::string& host);

class ApiServer {
public:
    // Binds and starts listening; errors name the host and port (address in use, a public
    // host without an API key).
    static Result<std::unique_ptr<ApiServer>> start(const ServerOptions& options);
    ~ApiServer();  // stops listening and waits for the connections' threads

    int port() const;
    const std::string& host() const;

    // Requests go to `queue` from now on, under the model name `model_id`; nullptr: 503 again.
    void serve(std::shared_ptr<GenerationQueue> queue, std::string model_id);
    // Called on an HTTP thread after each completion request.
    void set_request_observer(std::function<void(const RequestRecord&)> observer);

    struct Impl;

private:
    explicit ApiServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember::server

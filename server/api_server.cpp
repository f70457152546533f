#include "server/api_server.h"

#include <httplib.h>
#ifndef _WIN32
#include <sys/socket.h>
#endif

#include <chrono>
#include <mutex>
#include <optional>
#include <random>
#include <utility>
#include <thread>

#include <nlohmann/json.hpp>

#include "chat_template/chat_template.h"
#include "ember/markup.h"
#include "server/api_request.h"
#include "server/completion_json.h"
#include "server/metrics_text.h"

namespace ember::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// How often a stream with nothing to send checks that its client is still there.
constexpr auto kStreamHeartbeat = 250ms;

int64_t unix_seconds() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void send_json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(dump(body), "application/json");
}

void send_error(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    res.set_content(error_body(e), "application/json");
}

ApiError unavailable() {
    ApiError e;
    e.status = 503;
    e.type = "unavailable_error";
    e.message = "the model is loading";
    return e;
}

bool constant_time_equal(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return false;
    unsigned char diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    return diff == 0;
}

// What a model serves with: its queue, its name and its chat template (ChatML without one).
struct Served {
    std::shared_ptr<GenerationQueue> queue;
    std::string model_id;
    std::optional<chat::ChatTemplate> chat_template;
    std::string chat_template_name;  // "model" or "chatml"
};

// A completion's prompt as tokens, or the error that keeps it from being one.
Parsed<std::vector<int32_t>> prompt_tokens(const Served& s, const CompletionRequest& r) {
    const Model& model = s.queue->model();
    std::vector<int32_t> ids;
    if (r.chat) {
        // What clients wrote stays text: "</s>" in a message must not end its turn (ember/markup.h).
        std::vector<chat::Message> messages = r.messages;
        for (chat::Message& m : messages) m.content = escape_markup(m.content, model.info().control_pieces);
        auto text = s.chat_template->render(messages, true);
        if (!text) {
            ApiError e;
            e.message = "messages: the model's chat template refused them: " + text.error().message;
            e.param = "messages";
            return e;
        }
        ids = model.tokenize_markup(*text, false);
        if (model.add_bos() && (ids.empty() || ids.front() != model.bos())) ids.insert(ids.begin(), model.bos());
    } else if (r.prompt_tokens) {
        ids = *r.prompt_tokens;
        for (size_t i = 0; i < ids.size(); ++i)
            if (ids[i] >= model.info().n_vocab)
                return bad_field("prompt", "token id " + std::to_string(ids[i]) + " at index " + std::to_string(i) +
                                               " is not below the vocabulary size " + std::to_string(model.info().n_vocab));
    } else {
        ids = model.tokenize(r.prompt, model.add_bos());
    }
    if (ids.empty()) return bad_field(r.chat ? "messages" : "prompt", "is empty: there is nothing to continue from");
    if (int64_t(ids.size()) >= s.queue->n_ctx()) {
        ApiError e;
        e.message = "this model's context holds " + std::to_string(s.queue->n_ctx()) + " tokens, and the " +
                    (r.chat ? "messages" : "prompt") + " alone take " + std::to_string(ids.size()) +
                    "; shorten them or start the server with a larger --ctx-size";
        e.param = r.chat ? "messages" : "prompt";
        e.code = "context_length_exceeded";
        return e;
    }
    return ids;
}

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

// "localhost:8080" -> "localhost", "[::1]:8080" -> "::1".
std::string host_name(const std::string& host) {
    if (!host.empty() && host.front() == '[') return host.substr(1, host.find(']') - 1);
    return host.substr(0, host.find(':'));
}

void fill(RequestRecord& r, const Outcome& o) {
    r.finish_reason = o.finish_reason;
    r.prompt_tokens = o.prompt_tokens;
    r.completion_tokens = o.completion_tokens;
    r.tokens_per_second = o.timings.generate_ms > 0 ? 1000.0 * o.timings.n_generated / o.timings.generate_ms : 0.0;
}

ApiError generation_failed(const Error& e) {
    ApiError a;
    a.status = 500;
    a.type = "server_error";
    a.message = "generation failed: " + e.message;
    return a;
}

}  // namespace

bool is_loopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

struct ApiServer::Impl {
    ServerOptions options;
    httplib::Server http;
    int port = 0;
    std::thread listener;

    std::mutex mutex;  // guards served, observer, rng
    std::shared_ptr<const Served> served;
    std::function<void(const RequestRecord&)> observer;
    std::mt19937_64 rng{std::random_device{}()};

    std::atomic<bool> stopping{false};
    std::atomic<bool> listener_ended{false};  // set before the HTTP threads are joined: answers end now
    std::atomic<int64_t> http_requests{0};
    std::atomic<int64_t> http_errors{0};

    std::shared_ptr<const Served> current() {
        std::lock_guard lock(mutex);
        return served;
    }
    uint64_t random_seed() {
        std::lock_guard lock(mutex);
        return rng() & 0xFFFFFFFFu;
    }
    void record(const RequestRecord& r) {
        std::function<void(const RequestRecord&)> f;
        {
            std::lock_guard lock(mutex);
            f = observer;
        }
        if (f) f(r);
    }

    std::optional<ApiError> refused(const httplib::Request& req) const;
    // The model served and the request's JSON body; nullptr once the refusal is sent.
    std::shared_ptr<const Served> served_json(const httplib::Request& req, httplib::Response& res, json& body);
    void routes();
    void completion(const httplib::Request& req, httplib::Response& res, bool chat);
    void answer(httplib::Response& res, std::shared_ptr<const Served> s, std::shared_ptr<Stream> stream,
                AnswerHeader header, bool stream_events, bool include_usage, RequestRecord record);
};

// Checked in the handlers, once the body is read: a refusal before it would leave the body's bytes
// to be read as the connection's next request.
std::optional<ApiError> ApiServer::Impl::refused(const httplib::Request& req) const {
    if (!options.api_key.empty() &&
        !constant_time_equal(req.get_header_value("Authorization"), "Bearer " + options.api_key)) {
        ApiError e;
        e.status = 401;
        e.type = "authentication_error";
        e.code = "invalid_api_key";
        e.message = "this server needs its API key: send the header \"Authorization: Bearer <key>\"";
        return e;
    }
    // On loopback, a web page the user visits could reach the API through a name of its own that
    // resolves to 127.0.0.1 (DNS rebinding); its requests carry that name as their Host.
    if (is_loopback(options.host) && req.has_header("Host") && !is_loopback(host_name(req.get_header_value("Host")))) {
        ApiError e;
        e.status = 403;
        e.type = "permission_error";
        e.message = "Host '" + req.get_header_value("Host") +
                    "' is not this computer: a server on loopback answers localhost, 127.0.0.1 and [::1] only";
        return e;
    }
    return std::nullopt;
}

std::shared_ptr<const Served> ApiServer::Impl::served_json(const httplib::Request& req, httplib::Response& res,
                                                            json& body) {
    std::optional<ApiError> e = refused(req);
    auto s = current();
    if (!e && !s) e = unavailable();
    auto parsed = e ? Parsed<json>(json()) : parse_json_body(req.body);
    if (auto* bad = std::get_if<ApiError>(&parsed)) e = *bad;
    if (e) {
        send_error(res, *e);
        return nullptr;
    }
    body = std::move(std::get<json>(parsed));
    return s;
}

void ApiServer::Impl::routes() {
    http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        ApiError e;
        e.status = res.status;
        if (res.status == 404) e.message = "no endpoint " + req.method + " " + req.path;
        else if (res.status == 413) e.message = "the request body is larger than this server accepts";
        else if (res.status == 400) e.message = "the request is not valid HTTP, or it did not arrive in time";
        else e.message = "the request could not be served (HTTP " + std::to_string(res.status) + ")";
        send_error(res, e);
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        ApiError e;
        e.status = 500;
        e.type = "server_error";
        try {
            std::rethrow_exception(ep);
        } catch (const std::exception& ex) {
            e.message = std::string("internal error: ") + ex.what();
        } catch (...) {
            e.message = "internal error";
        }
        send_error(res, e);
    });
    http.set_logger([this](const httplib::Request&, const httplib::Response& res) {
        ++http_requests;
        if (res.status >= 400) ++http_errors;
    });

    http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
        if (!current()) return send_error(res, unavailable());
        send_json(res, 200, json{{"status", "ok"}});
    });
    http.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
        if (auto e = refused(req)) return send_error(res, *e);
        const auto s = current();
        if (!s) return send_error(res, unavailable());
        const ModelInfo& info = s->queue->model().info();
        json model{{"id", s->model_id},
                   {"object", "model"},
                   {"created", unix_seconds()},
                   {"owned_by", "ember"},
                   {"meta",
                    {{"architecture", info.architecture},
                     {"weight_type", info.weight_type},
                     {"n_params", info.n_params},
                     {"size", info.weight_bytes},
                     {"n_vocab", info.n_vocab},
                     {"n_ctx_train", info.n_ctx_train},
                     {"n_ctx", s->queue->n_ctx()},
                     {"sparse", info.sparse},
                     {"activation_sparsity", s->queue->activation_sparsity()},
                     {"chat_template", s->chat_template_name}}}};
        send_json(res, 200, json{{"object", "list"}, {"data", json::array({model})}});
    });
    http.Get("/metrics", [this](const httplib::Request& req, httplib::Response& res) {
        if (auto e = refused(req)) return send_error(res, *e);
        const auto s = current();
        const QueueCounters q = s ? s->queue->counters() : QueueCounters{};
        res.set_content(prometheus_text(q, HttpCounters{http_requests.load(), http_errors.load()}),
                        "text/plain; version=0.0.4");
    });
    http.Post("/v1/chat/completions",
              [this](const httplib::Request& req, httplib::Response& res) { completion(req, res, true); });
    http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) { completion(req, res, false); });
    http.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
        json j;
        const auto s = served_json(req, res, j);
        if (!s) return;
        if (!j.is_object() || !j.contains("content") || !j["content"].is_string())
            return send_error(res, bad_field("content", "must be a string"));
        const json add = j.value("add_special", json(false)), special = j.value("parse_special", json(true));
        if (!add.is_boolean()) return send_error(res, bad_field("add_special", "must be true or false"));
        if (!special.is_boolean()) return send_error(res, bad_field("parse_special", "must be true or false"));
        const Model& model = s->queue->model();
        const std::string text = j["content"].get<std::string>();
        const std::vector<int32_t> ids =
            special.get<bool>() ? model.tokenize_markup(text, add.get<bool>()) : model.tokenize(text, add.get<bool>());
        send_json(res, 200, json{{"tokens", ids}});
    });
    http.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
        json j;
        const auto s = served_json(req, res, j);
        if (!s) return;
        if (!j.is_object() || !j.contains("tokens") || !j["tokens"].is_array())
            return send_error(res, bad_field("tokens", "must be an array of token ids"));
        const Model& model = s->queue->model();
        std::string text;
        for (size_t i = 0; i < j["tokens"].size(); ++i) {
            const json& t = j["tokens"][i];
            if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= model.info().n_vocab)
                return send_error(res, bad_field("tokens[" + std::to_string(i) + "]",
                                                 "must be a token id below " + std::to_string(model.info().n_vocab)));
            text += model.token_text(int32_t(t.get<int64_t>()));
        }
        send_json(res, 200, json{{"content", text}});
    });
}

void ApiServer::Impl::completion(const httplib::Request& req, httplib::Response& res, bool chat) {
    RequestRecord record;
    record.path = req.path;
    const auto refuse = [&](const ApiError& e) {
        send_error(res, e);
        record.status = e.status;
        record.error = e.message;
        this->record(record);
    };
    if (auto e = refused(req)) return refuse(*e);
    const auto s = current();
    if (!s) return refuse(unavailable());
    auto body = parse_json_body(req.body);
    if (auto* e = std::get_if<ApiError>(&body)) return refuse(*e);
    auto parsed = parse_completion_request(std::get<json>(body), chat, random_seed());
    if (auto* e = std::get_if<ApiError>(&parsed)) return refuse(*e);
    CompletionRequest& r = std::get<CompletionRequest>(parsed);
    if (!r.model.empty() && r.model != s->model_id) {
        ApiError e;
        e.status = 404;
        e.param = "model";
        e.code = "model_not_found";
        e.message = "model: '" + r.model + "' is not served here; this server serves '" + s->model_id + "'";
        return refuse(e);
    }
    auto ids = prompt_tokens(*s, r);
    if (auto* e = std::get_if<ApiError>(&ids)) return refuse(*e);

    Job job;
    job.prompt = std::move(std::get<std::vector<int32_t>>(ids));
    job.params.n_predict = r.max_tokens;
    job.params.ignore_eos = r.ignore_eos;
    job.params.sampling = r.sampling;
    job.stop = std::move(r.stop);
    AnswerHeader header{chat, "", unix_seconds(), s->model_id};
    header.id = std::string(chat ? "chatcmpl-" : "cmpl-") + std::to_string(random_seed());
    record.stream = r.stream;
    if (chat) record.messages = r.messages;
    std::shared_ptr<Stream> stream = s->queue->submit(std::move(job));
    answer(res, s, std::move(stream), std::move(header), r.stream, r.include_usage, std::move(record));
}

// Both kinds of answer go out as the generation runs, so a client that has gone is noticed and
// its generation cancelled: a stream sends its pieces as events (an SSE comment when there is
// nothing new), a whole answer sends spaces until its JSON is ready (whitespace before a JSON
// value is still JSON). A write that fails means the client has gone. The status is sent first,
// so a whole answer whose generation fails carries the error object with status 200. Neither is
// compressed: a compressor holds the spaces back, and the client's leaving would go unnoticed
// (httplib compresses exactly "application/json", never "text/event-stream").
void ApiServer::Impl::answer(httplib::Response& res, std::shared_ptr<const Served> s, std::shared_ptr<Stream> stream,
                             AnswerHeader header, bool stream_events, bool include_usage, RequestRecord record) {
    struct State {
        std::shared_ptr<const Served> served;
        std::shared_ptr<Stream> stream;
        AnswerHeader header;
        bool events;
        bool include_usage;
        RequestRecord record;
        bool started = false;
        std::string text;  // the answer's text so far
    };
    auto st = std::make_shared<State>(State{std::move(s), std::move(stream), std::move(header), stream_events,
                                            include_usage, std::move(record), false, {}});
    if (stream_events) res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        stream_events ? "text/event-stream" : "application/json; charset=utf-8",
        [this, st](size_t, httplib::DataSink& sink) {
            const auto send = [&](const std::string& data) { return sink.write(data.data(), data.size()); };
            if (st->events && !st->started) {
                st->started = true;
                if (st->header.chat && !send(sse(chunk_json(st->header, "", true)))) return false;
            }
            if (stopping) return false;
            const Stream::Taken t = st->stream->take(kStreamHeartbeat);
            std::string events;
            for (const std::string& piece : t.pieces) {
                st->text += piece;
                if (st->events) events += sse(chunk_json(st->header, piece));
            }
            if (!events.empty() && !send(events)) return false;
            if (!t.finished) return events.empty() ? send(st->events ? ": ping\n\n" : " ") : true;
            const Outcome& o = st->stream->outcome();
            RequestRecord& r = st->record;
            fill(r, o);
            r.answer = st->text;
            if (o.error) {
                const ApiError e = generation_failed(*o.error);
                r.status = e.status;
                r.error = e.message;
                send(st->events ? "data: " + error_body(e) + "\n\n" : error_body(e));
            } else if (!st->events) {
                send(dump(answer_json(st->header, st->text, o)));
            } else if (o.finish_reason != "cancelled") {
                send(sse(chunk_json(st->header, "", false, &o)));
                if (st->include_usage) send(sse(usage_chunk_json(st->header, o)));
                send("data: [DONE]\n\n");
            }
            this->record(r);
            sink.done();
            return true;
        },
        [st](bool success) {
            if (!success) st->served->queue->cancel(st->stream);
        });
}

ApiServer::ApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<ApiServer>> ApiServer::start(const ServerOptions& options) {
    if (!is_loopback(options.host) && options.api_key.empty())
        return Error{"--host " + options.host + ": serving beyond this computer needs an API key (--api-key KEY)"};
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    httplib::Server& http = impl->http;
    const int connections = std::max(1, options.connections);
    http.new_task_queue = [connections] { return new httplib::ThreadPool(size_t(connections)); };
    http.set_payload_max_length(options.max_body_bytes);
    http.set_read_timeout(options.read_timeout_seconds, 0);
    // An idle kept-alive connection holds a thread too: it gets no longer than a silent request.
    http.set_keep_alive_timeout(options.read_timeout_seconds);
    http.set_keep_alive_max_count(1000);
    // Streamed chunks are small: without this, Nagle's algorithm meets the client's delayed ACK
    // and holds each one back ~40 ms.
    http.set_tcp_nodelay(true);
    impl->routes();
    int listening = -1;
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second server on the
    // same port would start without an error and take half the connections.
    http.set_socket_options([&listening](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const char*>(&yes), sizeof yes);
        listening = int(sock);
    });
    if (options.port == 0) {
        impl->port = http.bind_to_any_port(options.host);
        if (impl->port < 0) return Error{"cannot listen on " + options.host + " (any port)"};
    } else {
        if (!http.bind_to_port(options.host, options.port))
            return Error{"cannot listen on " + options.host + ":" + std::to_string(options.port) +
                         " (in use, or not an address of this computer)"};
        impl->port = options.port;
    }
#ifndef _WIN32
    // cpp-httplib listens with a backlog of 5: a burst of new clients beyond that has its
    // connections dropped and retried a second later. Listening again raises the backlog.
    if (listening >= 0) ::listen(listening, SOMAXCONN);
#endif
    Impl* raw = impl.get();
    impl->listener = std::thread([raw] {
        raw->http.listen_after_bind();
        raw->listener_ended = true;
    });
    // stop() does nothing to a server not yet listening: until it is, a destructor could wait forever.
    while (!http.is_running() && !impl->listener_ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return std::unique_ptr<ApiServer>(new ApiServer(std::move(impl)));
}

ApiServer::~ApiServer() {
    impl_->stopping = true;
    impl_->http.stop();
    if (impl_->listener.joinable()) impl_->listener.join();
}

int ApiServer::port() const { return impl_->port; }
const std::string& ApiServer::host() const { return impl_->options.host; }

void ApiServer::serve(std::shared_ptr<GenerationQueue> queue, std::string model_id) {
    std::shared_ptr<Served> s;
    if (queue) {
        s = std::make_shared<Served>();
        const ModelInfo& info = queue->model().info();
        auto parsed = chat::ChatTemplate::parse(info.chat_template, info.bos_token, info.eos_token);
        s->chat_template_name = parsed ? "model" : "chatml";
        if (!parsed) parsed = chat::ChatTemplate::parse(chat::kChatMlTemplate, "", "");
        s->chat_template = std::move(parsed.value());
        s->queue = std::move(queue);
        s->model_id = std::move(model_id);
    }
    std::shared_ptr<const Served> old;
    {
        std::lock_guard lock(impl_->mutex);
        old = std::exchange(impl_->served, std::move(s));
    }
    // The old model's requests end now, so it can be freed before another is loaded.
    if (old) old->queue->cancel_all();
}

void ApiServer::set_request_observer(std::function<void(const RequestRecord&)> observer) {
    std::lock_guard lock(impl_->mutex);
    impl_->observer = std::move(observer);
}

}  // namespace ember::server

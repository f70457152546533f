// The API server's parts that clients meet first: the request checks (every bad field named),
// the JSON limits, `stop` sequences over streamed text, the chat-template fallbacks, and the
// server itself over real loopback HTTP before and after its model is loaded.
#include <QtTest>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "chat_template/chat_template.h"
#include "server/api_request.h"
#include "server/api_server.h"
#include "server/stop_strings.h"

using ember::server::ApiError;
using ember::server::CompletionRequest;
using ember::server::StopStrings;
using nlohmann::json;

namespace {

// The error a body gets, or an empty one when it parses.
ApiError request_error(const std::string& body, bool chat = false) {
    auto j = ember::server::parse_json_body(body);
    if (auto* e = std::get_if<ApiError>(&j)) return *e;
    auto r = ember::server::parse_completion_request(std::get<json>(j), chat, 7);
    if (auto* e = std::get_if<ApiError>(&r)) return *e;
    return ApiError{0, "", "", "", ""};
}

CompletionRequest request(const std::string& body, bool chat = false) {
    auto r = ember::server::parse_completion_request(json::parse(body), chat, 7);
    if (auto* e = std::get_if<ApiError>(&r)) qFatal("unexpected error: %s", e->message.c_str());
    return std::get<CompletionRequest>(r);
}

std::string nested(int depth) { return std::string(size_t(depth), '[') + std::string(size_t(depth), ']'); }

}  // namespace

class TestServerParts : public QObject {
    Q_OBJECT

private slots:
    void stop_sequence_split_over_pieces_is_cut_out() {
        StopStrings s({"lo wor"});
        std::string out = s.feed("Hel");
        QCOMPARE(QString::fromStdString(out), QStringLiteral("He"));  // "l" may start the stop sequence
        out += s.feed("lo world");
        QVERIFY(s.stopped());
        QCOMPARE(QString::fromStdString(out), QStringLiteral("Hel"));
        QVERIFY(s.feed("more").empty());
        QVERIFY(s.flush().empty());
    }

    void text_held_back_is_released_when_no_stop_follows() {
        StopStrings s({"</answer>", "###"});
        std::string out = s.feed("a </ans");
        QCOMPARE(QString::fromStdString(out), QStringLiteral("a "));
        out += s.feed("wer is #");
        QCOMPARE(QString::fromStdString(out), QStringLiteral("a </answer is "));
        out += s.flush();
        QCOMPARE(QString::fromStdString(out), QStringLiteral("a </answer is #"));
        QVERIFY(!s.stopped());
    }

    void every_bad_field_is_named() {
        const struct {
            const char* body;
            bool chat;
            const char* param;
        } cases[] = {
            {R"({"prompt": "x", "max_tokens": -5})", false, "max_tokens"},
            {R"({"prompt": "x", "max_tokens": 0})", false, "max_tokens"},
            {R"({"prompt": "x", "max_tokens": 1.5})", false, "max_tokens"},
            {R"({"prompt": "x", "n": 1000000})", false, "n"},
            {R"({"prompt": "x", "temperature": "hot"})", false, "temperature"},
            {R"({"prompt": "x", "top_p": 2})", false, "top_p"},
            {R"({"prompt": "x", "top_k": -1})", false, "top_k"},
            {R"({"prompt": "x", "seed": "abc"})", false, "seed"},
            {R"({"prompt": "x", "stream": "yes"})", false, "stream"},
            {R"({"prompt": "x", "stop": [1]})", false, "stop"},
            {R"({"prompt": "x", "model": 3})", false, "model"},
            {R"({"prompt": {"text": "x"}})", false, "prompt"},
            {R"({"prompt": [-1]})", false, "prompt"},
            {R"({"max_tokens": 3})", false, "prompt"},
            {R"({"messages": []})", true, "messages"},
            {R"({"messages": "hi"})", true, "messages"},
            {R"({"messages": [{"role": "robot", "content": "hi"}]})", true, "messages[0].role"},
            {R"({"messages": [{"role": "user"}]})", true, "messages[0].content"},
            {R"({"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": 5}]})", true,
             "messages[1].content"},
            {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})", true,
             "messages[0].content[0]"},
            {R"({"messages": [{"role": "user", "content": "a"}], "stream_options": {"include_usage": 1}})", true,
             "stream_options.include_usage"},
        };
        for (const auto& c : cases) {
            const ApiError e = request_error(c.body, c.chat);
            QVERIFY2(e.status == 400, c.body);
            QCOMPARE(QString::fromStdString(e.param), QString::fromLatin1(c.param));
            QVERIFY2(QString::fromStdString(e.message).startsWith(QLatin1String(c.param)), e.message.c_str());
        }
        const ApiError stops = request_error(R"({"prompt": "x", "stop": ["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"]})");
        QCOMPARE(QString::fromStdString(stops.param), QStringLiteral("stop"));
    }

    void malformed_bodies_are_refused_with_the_reason() {
        QVERIFY(QString::fromStdString(request_error("{\"prompt\": ").message).contains(QLatin1String("not valid JSON")));
        QVERIFY(QString::fromStdString(request_error("{\"prompt\": \"\xff\xfe\"}").message).contains(QLatin1String("not valid JSON")));
        QVERIFY(QString::fromStdString(request_error("[1, 2]").message).contains(QLatin1String("JSON object")));
        // Nesting is refused while parsing, before a deep tree is built.
        QVERIFY(QString::fromStdString(request_error(nested(100000)).message).contains(QLatin1String("nests deeper")));
        QVERIFY(std::holds_alternative<json>(ember::server::parse_json_body(nested(ember::server::kMaxJsonDepth))));
    }

    void fields_reach_the_request() {
        const CompletionRequest r = request(R"({"prompt": ["abc"], "max_tokens": 12, "temperature": 0, "top_k": 5,
            "top_p": 0.5, "min_p": 0.1, "repeat_penalty": 1.2, "seed": 42, "stop": "\n", "stream": true,
            "stream_options": {"include_usage": true}, "ignore_eos": true, "unknown_field": {"a": 1}})");
        QCOMPARE(QString::fromStdString(r.prompt), QStringLiteral("abc"));
        QCOMPARE(r.max_tokens, 12);
        QCOMPARE(r.sampling.temperature, 0.0f);
        QCOMPARE(r.sampling.top_k, 5);
        QCOMPARE(r.sampling.top_p, 0.5f);
        QCOMPARE(r.sampling.min_p, 0.1f);
        QCOMPARE(r.sampling.repeat_penalty, 1.2f);
        QCOMPARE(r.sampling.seed, uint64_t(42));
        QCOMPARE(r.stop.size(), size_t(1));
        QVERIFY(r.stream && r.include_usage && r.ignore_eos);
        QCOMPARE(request(R"({"prompt": "x"})").sampling.seed, uint64_t(7));  // no seed: the server's random one
        QCOMPARE(request(R"({"prompt": "x", "seed": -1})").sampling.seed, uint64_t(7));
        QCOMPARE(request(R"({"prompt": [1, 2, 3]})").prompt_tokens->size(), size_t(3));
        const CompletionRequest chat = request(
            R"({"messages": [{"role": "developer", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]}],
                "max_completion_tokens": 3})", true);
        QCOMPARE(QString::fromStdString(chat.messages[0].role), QStringLiteral("system"));
        QCOMPARE(QString::fromStdString(chat.messages[1].content), QStringLiteral("Hi there"));
        QCOMPARE(chat.max_tokens, 3);
    }

    void chat_templates_fall_back_as_models_are_prompted() {
        auto chatml = ember::chat::ChatTemplate::parse(ember::chat::kChatMlTemplate, "", "");
        QVERIFY(chatml.ok());
        auto text = chatml->render({{"system", "S"}, {"user", "U"}}, true);
        QVERIFY(text.ok());
        QCOMPARE(QString::fromStdString(*text),
                 QStringLiteral("<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"));
        // Mistral-style: no system role, so the system text leads the first question.
        auto strict = ember::chat::ChatTemplate::parse(
            "{% for m in messages %}{% if m['role'] == 'system' %}{{ raise_exception('no system role') }}{% endif %}"
            "[{{ m['role'] }}]{{ m['content'] }}{% endfor %}",
            "<s>", "</s>");
        QVERIFY(strict.ok());
        auto merged = strict->render({{"system", "S"}, {"user", "U"}, {"assistant", "A"}}, false);
        QVERIFY(merged.ok());
        QCOMPARE(QString::fromStdString(*merged), QStringLiteral("[user]S\n\nU[assistant]A"));
        QVERIFY(!strict->render({{"system", "S"}}, false).ok());
        QVERIFY(!ember::chat::ChatTemplate::parse("  \n", "", "").ok());
    }

    void public_address_needs_a_key() {
        ember::server::ServerOptions o;
        o.host = "0.0.0.0";
        o.port = 0;
        auto refused = ember::server::ApiServer::start(o);
        QVERIFY(!refused.ok());
        QVERIFY(QString::fromStdString(refused.error().message).contains(QLatin1String("--api-key")));
        QVERIFY(ember::server::is_loopback("127.0.0.1") && ember::server::is_loopback("::1") &&
                ember::server::is_loopback("localhost") && !ember::server::is_loopback("192.168.1.2"));
    }

    void health_is_503_until_the_model_is_served() {
        ember::server::ServerOptions o;
        o.port = 0;
        o.max_body_bytes = 4096;
        auto server = ember::server::ApiServer::start(o);
        QVERIFY2(server.ok(), server.ok() ? "" : server.error().message.c_str());
        httplib::Client client("127.0.0.1", (*server)->port());
        auto health = client.Get("/health");
        QVERIFY(health);
        QCOMPARE(health->status, 503);
        QCOMPARE(QString::fromStdString(json::parse(health->body)["error"]["type"].get<std::string>()),
                 QStringLiteral("unavailable_error"));
        auto early = client.Post("/v1/completions", R"({"prompt": "x"})", "application/json");
        QVERIFY(early);
        QCOMPARE(early->status, 503);

        auto model = ember::Model::load(EMBER_DEMO_MODEL);
        QVERIFY(model.ok());
        ember::SessionParams sp;
        sp.n_ctx = 64;
        auto queue = ember::server::GenerationQueue::create(*model, sp);
        QVERIFY(queue.ok());
        (*server)->serve(std::move(*queue), "demo");
        health = client.Get("/health");
        QVERIFY(health);
        QCOMPARE(health->status, 200);

        const auto post = [&](const std::string& body) { return client.Post("/v1/completions", body, "application/json"); };
        auto ok = post(R"({"prompt": "Once upon a time", "max_tokens": 4, "temperature": 0})");
        QVERIFY(ok);
        QCOMPARE(ok->status, 200);
        const json answer = json::parse(ok->body);
        QCOMPARE(answer["usage"]["completion_tokens"].get<int>(), 4);
        QCOMPARE(QString::fromStdString(answer["choices"][0]["finish_reason"].get<std::string>()), QStringLiteral("length"));

        auto big = post(R"({"prompt": ")" + std::string(8000, 'a') + R"("})");
        QVERIFY(big);
        QCOMPARE(big->status, 413);
        QVERIFY(json::parse(big->body)["error"]["message"].get<std::string>().find("larger") != std::string::npos);
        auto overflow = post(R"({"prompt": ")" + std::string(2000, 'a') + R"("})");
        QVERIFY(overflow);
        QCOMPARE(overflow->status, 400);
        QCOMPARE(QString::fromStdString(json::parse(overflow->body)["error"]["code"].get<std::string>()),
                 QStringLiteral("context_length_exceeded"));
        auto unknown = post(R"({"prompt": "x", "model": "gpt-4"})");
        QVERIFY(unknown);
        QCOMPARE(unknown->status, 404);
        auto missing = client.Get("/v2/nothing");
        QVERIFY(missing);
        QCOMPARE(missing->status, 404);
        QVERIFY(json::parse(missing->body).contains("error"));
        // As many tokens as a 32-bit count allows: the context ends the answer, nothing is reserved for the rest.
        auto most = post(R"({"prompt": "x", "max_tokens": 2147483647, "ignore_eos": true})");
        QVERIFY(most);
        QCOMPARE(most->status, 200);
        QCOMPARE(QString::fromStdString(json::parse(most->body)["choices"][0]["finish_reason"].get<std::string>()),
                 QStringLiteral("length"));
        // A name of a web page's own that resolves to 127.0.0.1 (DNS rebinding) gets nothing.
        auto rebound = client.Get("/v1/models", {{"Host", "attacker.example:8080"}});
        QVERIFY(rebound);
        QCOMPARE(rebound->status, 403);
        QCOMPARE(client.Get("/v1/models", {{"Host", "localhost:8080"}})->status, 200);
        // Still serving after all of that.
        QCOMPARE(post(R"({"prompt": "x", "max_tokens": 1})")->status, 200);

        // A second server on the same port is refused, not started beside the first.
        ember::server::ServerOptions same = o;
        same.port = (*server)->port();
        auto second = ember::server::ApiServer::start(same);
        QVERIFY(!second.ok());
        QVERIFY(QString::fromStdString(second.error().message).contains(QString::number(same.port)));
    }

    // A refused request's body is read all the same, so the kept-alive connection's next request
    // is read from where it starts.
    void refused_body_does_not_spill_into_the_next_request() {
        ember::server::ServerOptions o;
        o.port = 0;
        o.api_key = "sesame";
        auto server = ember::server::ApiServer::start(o);
        QVERIFY(server.ok());
        httplib::Client client("127.0.0.1", (*server)->port());
        client.set_keep_alive(true);
        auto denied = client.Post("/v1/completions", R"({"prompt": ")" + std::string(20000, 'a') + R"("})", "application/json");
        QVERIFY(denied);
        QCOMPARE(denied->status, 401);
        auto health = client.Get("/health");
        QVERIFY(health);
        QCOMPARE(health->status, 503);  // no model: the answer to /health itself, not to leftover bytes
    }

    // Destroying a server that has just started returns (it once waited for a listener that had
    // not begun listening).
    void a_server_stopped_at_once_stops() {
        for (int i = 0; i < 20; ++i) {
            ember::server::ServerOptions o;
            o.port = 0;
            auto server = ember::server::ApiServer::start(o);
            QVERIFY(server.ok());
        }
    }
};

QTEST_GUILESS_MAIN(TestServerParts)
#include "tst_server_parts.moc"

// The API server's request checks on arbitrary bodies, and its stop sequences on arbitrary text.
// First byte even: the rest is a request body, parsed as a chat (byte 1 odd) or a completion; it
// either becomes a request within the documented limits or an error with a status and a message.
// First byte odd: the rest is text streamed in pieces through three stop sequences; what comes out
// is exactly the text up to the first stop sequence, however the pieces fall.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "fuzz_support.h"
#include "server/api_request.h"
#include "server/stop_strings.h"

namespace {

void check_body(std::string_view body, bool chat) {
    using namespace ember::server;
    auto json = parse_json_body(body);
    if (auto* e = std::get_if<ApiError>(&json)) {
        if (e->status != 400 || e->message.empty()) ember::fuzz::fail("a body error without status 400 and a message");
        return;
    }
    auto r = parse_completion_request(std::get<nlohmann::json>(json), chat, 1);
    if (auto* e = std::get_if<ApiError>(&r)) {
        if (e->status != 400 || e->message.empty()) ember::fuzz::fail("a request error without status 400 and a message");
        return;
    }
    const CompletionRequest& req = std::get<CompletionRequest>(r);
    if (req.max_tokens == 0 || req.max_tokens < -1) ember::fuzz::fail("max_tokens out of range");
    if (req.stop.size() > kMaxStops) ember::fuzz::fail("too many stop sequences");
    if (chat && req.messages.empty()) ember::fuzz::fail("a chat without messages");
    if (!(req.sampling.temperature >= 0) || !(req.sampling.top_p >= 0 && req.sampling.top_p <= 1))
        ember::fuzz::fail("sampling out of range");
}

void check_stops(std::string_view data) {
    const std::vector<std::string> stops = {"ab", "\n\n", "xyzw"};
    std::string_view text = data;
    size_t first = std::string_view::npos;
    for (const std::string& s : stops) first = std::min(first, text.find(s));
    const std::string expected(text.substr(0, first));
    ember::server::StopStrings matcher(stops);
    std::string out;
    // Pieces of 1..8 bytes, their lengths taken from the text itself.
    for (size_t at = 0; at < text.size();) {
        const size_t n = std::min<size_t>(1 + (static_cast<unsigned char>(text[at]) & 7), text.size() - at);
        out += matcher.feed(text.substr(at, n));
        at += n;
    }
    out += matcher.flush();
    if (out != expected) ember::fuzz::fail("stop sequences: the text out is not the text up to the first stop");
    if (matcher.stopped() != (first != std::string_view::npos)) ember::fuzz::fail("stop sequences: stopped() is wrong");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 2) return 0;
    const std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
    if (data[0] % 2 == 0) check_body(rest, data[1] % 2 == 1);
    else check_stops(rest);
    return 0;
}

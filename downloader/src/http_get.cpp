#include "http_get.h"

#include <cctype>

#include "curl_handles.h"

namespace ember::hub {
namespace {

// A tree listing of a large repo is a few MB; anything far beyond is not the Hub.
constexpr size_t max_body = 64u << 20;

struct Sink {
    Response response;
    size_t limit = max_body;
    bool truncate = false;  // at the limit: keep what fits and stop, instead of failing
    bool too_big = false;
};

size_t on_body(char* data, size_t, size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    if (sink->response.body.size() + n > sink->limit) {
        if (sink->truncate) sink->response.body.append(data, sink->limit - sink->response.body.size());
        sink->too_big = true;
        return 0;
    }
    sink->response.body.append(data, n);
    return n;
}

size_t on_header(char* data, size_t, size_t n, void* user) {
    auto* sink = static_cast<Sink*>(user);
    std::string line(data, n);
    if (line.rfind("HTTP/", 0) == 0) {
        sink->response.headers.clear();  // a redirect's headers are not the answer's
        return n;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) return n;
    std::string name = line.substr(0, colon);
    for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    size_t b = line.find_first_not_of(" \t", colon + 1);
    size_t e = line.find_last_not_of(" \t\r\n");
    sink->response.headers[name] = b == std::string::npos || e < b ? std::string() : line.substr(b, e - b + 1);
    return n;
}

}  // namespace

namespace {

Result<Response> perform_get(CURL* e, const Settings& settings, const std::string& url, Sink& sink, const char* range) {
    char errbuf[CURL_ERROR_SIZE] = {};
    SlistHandle headers = auth_headers(settings);
    curl_easy_setopt(e, CURLOPT_URL, url.c_str());
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    // JSON may come compressed; a byte range is of the file as stored.
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, range ? nullptr : "");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &sink);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(e, CURLOPT_RANGE, range);
    CURLcode rc = curl_easy_perform(e);
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, nullptr);
    curl_easy_setopt(e, CURLOPT_RANGE, nullptr);
    if (sink.too_big && sink.truncate) rc = CURLE_OK;  // stopped on purpose, with what was asked for
    else if (sink.too_big) return Error{"GET " + url + ": answer larger than " + std::to_string(max_body >> 20) + " MiB"};
    if (rc != CURLE_OK) {
        std::string detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
        return Error{"GET " + url + ": " + detail};
    }
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &sink.response.status);
    return std::move(sink.response);
}

}  // namespace

Result<Response> http_get(CURL* e, const Settings& settings, const std::string& url) {
    Sink sink;
    return perform_get(e, settings, url, sink, nullptr);
}

Result<Response> http_get_head(CURL* e, const Settings& settings, const std::string& url, size_t bytes) {
    Sink sink;
    sink.limit = bytes;
    sink.truncate = true;
    const std::string range = "0-" + std::to_string(bytes == 0 ? 0 : bytes - 1);
    return perform_get(e, settings, url, sink, range.c_str());
}

}  // namespace ember::hub

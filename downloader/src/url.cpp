#include "url.h"

#include <curl/curl.h>

#include <memory>
#include <string_view>

namespace ember::hub::url {
namespace {

struct UrlDeleter {
    void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

std::optional<std::string> part(CURLU* u, CURLUPart which, unsigned flags = 0) {
    char* text = nullptr;
    if (curl_url_get(u, which, &text, flags) != CURLUE_OK) return std::nullopt;
    std::string out(text);
    curl_free(text);
    return out;
}

UrlHandle parse(const std::string& text) {
    UrlHandle u(curl_url());
    if (!u || curl_url_set(u.get(), CURLUPART_URL, text.c_str(), 0) != CURLUE_OK) return nullptr;
    return u;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// 127.0.0.0/8 written as an address in dotted decimal (curl's parser leaves a numeric host so),
// not a name that merely starts with "127.".
bool is_ipv4_loopback(std::string_view host) {
    int first = -1;
    size_t i = 0;
    for (int part = 0; part < 4; ++part) {
        if (part > 0) {
            if (i >= host.size() || host[i] != '.') return false;
            ++i;
        }
        const size_t start = i;
        int value = 0;
        while (i < host.size() && i - start < 3 && host[i] >= '0' && host[i] <= '9') value = value * 10 + (host[i++] - '0');
        if (i == start || value > 255 || (i - start > 1 && host[start] == '0')) return false;
        if (part == 0) first = value;
    }
    return i == host.size() && first == 127;
}

}  // namespace

std::string encode(std::string_view text, bool keep_slash) {
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(text.size());
    for (unsigned char c : text) {
        bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                          c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved || (keep_slash && c == '/')) {
            out += char(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

std::optional<std::string> origin(const std::string& text) {
    UrlHandle u = parse(text);
    if (!u) return std::nullopt;
    auto scheme = part(u.get(), CURLUPART_SCHEME);
    auto host = part(u.get(), CURLUPART_HOST);
    auto port = part(u.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT);
    if (!scheme || !host || !port) return std::nullopt;
    return *scheme + "://" + *host + ":" + *port;
}

bool is_loopback(const std::string& text) {
    UrlHandle u = parse(text);
    if (!u) return false;
    auto host = part(u.get(), CURLUPART_HOST);
    if (!host) return false;
    if (*host == "localhost" || *host == "[::1]") return true;
    return is_ipv4_loopback(*host);
}

std::optional<std::string> next_link(std::string_view header, const std::string& base) {
    // Link: <url>; rel="next", <url>; rel="prev"
    while (!header.empty()) {
        size_t open = header.find('<');
        size_t close = header.find('>', open == std::string_view::npos ? 0 : open);
        if (open == std::string_view::npos || close == std::string_view::npos) return std::nullopt;
        std::string_view target = header.substr(open + 1, close - open - 1);
        size_t end = header.find('<', close);
        std::string_view params = header.substr(close + 1, end == std::string_view::npos ? header.npos : end - close - 1);
        header = end == std::string_view::npos ? std::string_view{} : header.substr(end);

        bool is_next = false;
        while (!params.empty()) {
            size_t semi = params.find_first_of(";,");
            std::string_view param = trim(params.substr(0, semi));
            params = semi == std::string_view::npos ? std::string_view{} : params.substr(semi + 1);
            if (param == "rel=\"next\"" || param == "rel=next") is_next = true;
        }
        if (!is_next) continue;

        UrlHandle u = parse(base);
        if (!u) return std::nullopt;
        std::string t(target);
        if (curl_url_set(u.get(), CURLUPART_URL, t.c_str(), 0) != CURLUE_OK) return std::nullopt;
        return part(u.get(), CURLUPART_URL);
    }
    return std::nullopt;
}

}  // namespace ember::hub::url

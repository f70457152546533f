#include "curl_handles.h"

#include <mutex>

#include "url.h"

namespace ember::hub {

void curl_init_once() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

EasyHandle new_easy(const Settings& settings) {
    curl_init_once();
    EasyHandle h(curl_easy_init());
    if (!h) return h;
    CURL* e = h.get();
    curl_easy_setopt(e, CURLOPT_USERAGENT, "Ember/" EMBER_VERSION);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 10L);
    // Plain http only when the endpoint is loopback (the test server and its "CDN").
    const char* protocols = url::is_loopback(settings.endpoint) ? "http,https" : "https";
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, protocols);
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, protocols);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, long(settings.connect_timeout.count()));
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, long(settings.stall_timeout.count()));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    if (!settings.proxy.empty()) curl_easy_setopt(e, CURLOPT_PROXY, settings.proxy.c_str());
    return h;
}

SlistHandle auth_headers(const Settings& settings) {
    if (settings.token.empty()) return nullptr;
    std::string line = "Authorization: Bearer " + settings.token;
    return SlistHandle(curl_slist_append(nullptr, line.c_str()));
}

}  // namespace ember::hub

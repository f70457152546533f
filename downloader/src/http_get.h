#pragma once
// A blocking GET for the Hub's JSON API (small bodies, held in memory).

#include <curl/curl.h>

#include <map>
#include <string>

#include "ember/hub/result.h"
#include "ember/hub/settings.h"

namespace ember::hub {

struct Response {
    long status = 0;
    std::string body;
    std::map<std::string, std::string> headers;  // lower-case names, final response only
};

// Reuses `easy` (and so its connection); sets every option it needs afresh.
Result<Response> http_get(CURL* easy, const Settings& settings, const std::string& url);

// The first `bytes` bytes of url's body (fewer when it is shorter), following redirects: asks
// for a Range and, from a server that ignores it, stops reading once it has them.
Result<Response> http_get_head(CURL* easy, const Settings& settings, const std::string& url, size_t bytes);

}  // namespace ember::hub

#pragma once
// URL pieces the Hub client needs: encoding path parts, recognising loopback hosts, and
// following RFC 8288 Link headers without leaving the endpoint's origin.

#include <optional>
#include <string>
#include <string_view>

namespace ember::hub::url {

// RFC 3986 unreserved characters stay; with keep_slash, '/' stays too (a file path).
std::string encode(std::string_view text, bool keep_slash);

// "scheme://host:port" with the scheme's default port filled in; nullopt when unparsable.
std::optional<std::string> origin(const std::string& url);
bool is_loopback(const std::string& url);

// The target of rel="next" in a Link header, made absolute against base; nullopt if none.
std::optional<std::string> next_link(std::string_view link_header, const std::string& base);

}  // namespace ember::hub::url

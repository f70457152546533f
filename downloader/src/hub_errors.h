#pragma once
// Turns a Hub error answer (status, X-Error-Code, X-Error-Message) into one line a user can act on.

#include <map>
#include <string>

#include "ember/hub/result.h"

namespace ember::hub {

// repo: "owner/name"; url: what was asked for; have_token: whether a token was sent.
Error hub_error(const std::string& repo, const std::string& url, long status,
                const std::map<std::string, std::string>& headers, bool have_token);

}  // namespace ember::hub

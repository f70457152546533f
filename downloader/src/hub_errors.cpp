#include "hub_errors.h"

namespace ember::hub {
namespace {

std::string header(const std::map<std::string, std::string>& headers, const char* name) {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
}

}  // namespace

Error hub_error(const std::string& repo, const std::string& url, long status,
                const std::map<std::string, std::string>& headers, bool have_token) {
    const std::string code = header(headers, "x-error-code");
    const std::string message = header(headers, "x-error-message");
    const std::string tail = " (HTTP " + std::to_string(status) + (message.empty() ? "" : ": " + message) + "; " + url + ")";
    if (code == "GatedRepo") {
        return Error{repo + " is a gated repo: " +
                         std::string(have_token ? "this token has no access; accept the model's conditions on its Hub page"
                                                : "accept the model's conditions on its Hub page and set HF_TOKEN") +
                         tail,
                     ErrorKind::Gated, repo};
    }
    if (code == "RepoNotFound") {
        return Error{"repo " + repo + " not found" + std::string(have_token ? "" : " (or private: set HF_TOKEN)") + tail,
                     ErrorKind::NotFound, repo};
    }
    if (code == "RevisionNotFound") return Error{"revision not found in " + repo + tail, ErrorKind::NotFound, repo};
    if (code == "EntryNotFound") return Error{"file not found in " + repo + tail, ErrorKind::NotFound, repo};
    if (status == 401 || status == 403) {
        return Error{"access to " + repo + " refused" +
                         std::string(have_token ? ": check HF_TOKEN" : ": it may be private or gated, set HF_TOKEN") + tail,
                     ErrorKind::AccessRefused, repo};
    }
    if (status == 404) return Error{"not found" + tail, ErrorKind::NotFound, repo};
    return Error{"the Hub answered an error" + tail};
}

}  // namespace ember::hub

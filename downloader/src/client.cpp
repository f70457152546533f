#include "ember/hub/client.h"

#include "curl_handles.h"
#include "http_get.h"
#include "hub_errors.h"
#include "hub_json.h"
#include "path_safety.h"
#include "url.h"

namespace ember::hub {

struct Client::Connection {
    EasyHandle easy;
};

namespace {

bool hub_name_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

// Guards against a server whose pages never end.
constexpr int max_tree_pages = 10000;

}  // namespace

Status check_repo_id(const std::string& repo) {
    size_t slash = repo.find('/');
    bool ok = slash != std::string::npos && slash > 0 && slash + 1 < repo.size() && repo.size() <= 200 &&
              repo.find('/', slash + 1) == std::string::npos && repo.find("..") == std::string::npos &&
              repo.front() != '.' && repo[slash + 1] != '.';
    for (char c : repo) ok = ok && (c == '/' || hub_name_char(c));
    if (!ok) return Error{"'" + repo + "' is not a Hub repo id (owner/name)"};
    return Ok{};
}

Client::Client(Settings settings) : settings_(std::move(settings)), connection_(std::make_unique<Connection>()) {
    connection_->easy = new_easy(settings_);
}

Client::~Client() = default;

Result<std::vector<ModelSummary>> Client::search(const SearchQuery& q) {
    if (auto ok = check_endpoint(settings_.endpoint); !ok) return ok.error();
    std::string u = settings_.endpoint + "/api/models?limit=" + std::to_string(q.limit);
    if (!q.search.empty()) u += "&search=" + url::encode(q.search, false);
    if (!q.author.empty()) u += "&author=" + url::encode(q.author, false);
    if (!q.filter.empty()) u += "&filter=" + url::encode(q.filter, false);
    if (!q.sort.empty()) u += "&sort=" + url::encode(q.sort, false) + "&direction=-1";
    auto r = http_get(connection_->easy.get(), settings_, u);
    if (!r) return r.error();
    if (r->status != 200) return hub_error("search", u, r->status, r->headers, !settings_.token.empty());
    return json::parse_search(r->body, u);
}

Result<RepoInfo> Client::info(const std::string& repo, const std::string& revision) {
    if (auto ok = check_endpoint(settings_.endpoint); !ok) return ok.error();
    if (auto ok = check_repo_id(repo); !ok) return ok.error();
    std::string u = settings_.endpoint + "/api/models/" + repo;
    if (!revision.empty()) u += "/revision/" + url::encode(revision, false);
    auto r = http_get(connection_->easy.get(), settings_, u);
    if (!r) return r.error();
    if (r->status != 200) return hub_error(repo, u, r->status, r->headers, !settings_.token.empty());
    return json::parse_info(r->body, u);
}

Result<std::vector<FileEntry>> Client::tree(const std::string& repo, const std::string& revision) {
    if (auto ok = check_endpoint(settings_.endpoint); !ok) return ok.error();
    if (auto ok = check_repo_id(repo); !ok) return ok.error();
    const std::string rev = revision.empty() ? "main" : revision;
    std::string u = settings_.endpoint + "/api/models/" + repo + "/tree/" + url::encode(rev, false) + "?recursive=true";
    const auto home = url::origin(settings_.endpoint);
    std::vector<FileEntry> files;
    for (int page = 0; page < max_tree_pages; ++page) {
        auto r = http_get(connection_->easy.get(), settings_, u);
        if (!r) return r.error();
        if (r->status != 200) return hub_error(repo, u, r->status, r->headers, !settings_.token.empty());
        auto entries = json::parse_tree_page(r->body, u);
        if (!entries) return entries.error();
        for (auto& e : *entries) {
            if (auto safe = check_hub_path(e.path); !safe) return Error{u + ": " + safe.error().message};
            files.push_back(std::move(e));
        }
        auto link = r->headers.find("link");
        if (link == r->headers.end()) return files;
        auto next = url::next_link(link->second, u);
        if (!next) return files;
        // The next request carries the token, so it may only go back to the endpoint.
        if (url::origin(*next) != home) {
            return Error{u + ": next page link '" + *next + "' leaves the endpoint " + settings_.endpoint};
        }
        u = *next;
    }
    return Error{u + ": more than " + std::to_string(max_tree_pages) + " pages of files"};
}

Result<std::string> Client::file_head(const std::string& repo, const std::string& revision, const std::string& path,
                                      size_t bytes) {
    if (auto ok = check_endpoint(settings_.endpoint); !ok) return ok.error();
    if (auto ok = check_repo_id(repo); !ok) return ok.error();
    if (auto safe = check_hub_path(path); !safe) return safe.error();
    const std::string rev = revision.empty() ? "main" : revision;
    const std::string u = settings_.endpoint + "/" + repo + "/resolve/" + url::encode(rev, false) + "/" + url::encode(path, true);
    auto r = http_get_head(connection_->easy.get(), settings_, u, bytes);
    if (!r) return r.error();
    if (r->status != 206 && r->status != 200)
        return hub_error(repo + "/" + path, u, r->status, r->headers, !settings_.token.empty());
    return std::move(r->body);
}

}  // namespace ember::hub

#pragma once
// The Hub's JSON API: search, repo info, recursive file tree. Calls block; run them off the
// GUI thread. One Client serves one thread at a time (it keeps one connection warm).

#include <memory>
#include <string>
#include <vector>

#include "ember/hub/repo.h"
#include "ember/hub/result.h"
#include "ember/hub/settings.h"

namespace ember::hub {

class Client {
public:
    explicit Client(Settings settings);
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    const Settings& settings() const { return settings_; }
    // Used by the requests that follow.
    void set_token(std::string token) { settings_.token = std::move(token); }

    Result<std::vector<ModelSummary>> search(const SearchQuery& query);
    // revision: branch, tag or commit; empty means the default branch.
    Result<RepoInfo> info(const std::string& repo, const std::string& revision = {});
    // Every file (not directories) under the revision, following the Hub's pagination.
    Result<std::vector<FileEntry>> tree(const std::string& repo, const std::string& revision);
    // The first `bytes` bytes of a file (all of it when shorter), e.g. a GGUF header to judge a
    // model by before downloading it. Held in memory: keep `bytes` to a few MiB.
    Result<std::string> file_head(const std::string& repo, const std::string& revision, const std::string& path,
                                  size_t bytes);

private:
    struct Connection;
    Settings settings_;
    std::unique_ptr<Connection> connection_;
};

// "owner/name" with the Hub's characters only; the error names the bad id.
Status check_repo_id(const std::string& repo);

}  // namespace ember::hub

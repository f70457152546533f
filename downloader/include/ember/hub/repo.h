#pragma once
// What the Hub says about models and their files, as plain values.

#include <cstdint>
#include <string>
#include <vector>

namespace ember::hub {

enum class Gated { No, Auto, Manual };

struct ModelSummary {  // one search hit
    std::string id;    // "owner/name"
    int64_t downloads = 0;
    int64_t likes = 0;
    std::string last_modified;  // ISO 8601 as the Hub writes it; empty when absent
    std::vector<std::string> tags;
    Gated gated = Gated::No;
};

struct RepoInfo {
    std::string id;
    std::string sha;  // commit the revision points at; downloads pin to it
    Gated gated = Gated::No;
    bool is_private = false;
    std::string last_modified;
    std::vector<std::string> siblings;  // relative file paths
};

struct FileEntry {
    std::string path;      // relative to the repo root, '/'-separated, as the Hub sent it
    uint64_t size = 0;     // content bytes (for LFS files, the object's size)
    std::string oid;       // git blob SHA-1 (hex)
    std::string lfs_sha256;  // hex; empty for files stored in git itself
    bool is_lfs() const { return !lfs_sha256.empty(); }
};

struct SearchQuery {
    std::string search;
    std::string author;
    std::string filter = "gguf";
    std::string sort = "downloads";  // downloads, likes, lastModified, trendingScore
    int limit = 50;
};

}  // namespace ember::hub

#pragma once
// Parsers for the Hub's JSON answers. Each checks every field it uses and names the URL and
// the field (with its index) when something is missing or of the wrong type.

#include <string>
#include <vector>

#include "ember/hub/repo.h"
#include "ember/hub/result.h"

namespace ember::hub::json {

Result<std::vector<ModelSummary>> parse_search(const std::string& body, const std::string& url);
Result<RepoInfo> parse_info(const std::string& body, const std::string& url);
// One page of a tree listing; directories are skipped.
Result<std::vector<FileEntry>> parse_tree_page(const std::string& body, const std::string& url);

}  // namespace ember::hub::json

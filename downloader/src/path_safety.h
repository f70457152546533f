#pragma once
// Every path the Hub sends is untrusted: it must stay a plain relative path inside the model
// folder, whatever the server (or a man in the middle of a mirror) says.

#include <filesystem>
#include <string_view>

#include "ember/hub/result.h"

namespace ember::hub {

// Relative, '/'-separated, no empty, "." or ".." segment, no backslash, drive letter or control byte.
Status check_hub_path(std::string_view path);

// <models_dir>/<owner>/<name>/<path> after check_hub_path.
Result<std::filesystem::path> destination(const std::filesystem::path& models_dir, const std::string& repo,
                                          std::string_view hub_path);

// After the folders exist: `file`'s real parent (symlinks resolved) is still inside repo_dir.
Status check_inside(const std::filesystem::path& repo_dir, const std::filesystem::path& file);

}  // namespace ember::hub

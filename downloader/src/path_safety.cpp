#include "path_safety.h"

#include <algorithm>
#include <string>

namespace ember::hub {

namespace fs = std::filesystem;

Status check_hub_path(std::string_view path) {
    auto refuse = [&](const char* why) {
        return Error{"refusing Hub path '" + std::string(path) + "': " + why};
    };
    if (path.empty()) return refuse("empty");
    if (path.size() > 1024) return refuse("longer than 1024 bytes");
    if (path.front() == '/') return refuse("absolute");
    for (unsigned char c : path) {
        if (c < 0x20 || c == 0x7f) return refuse("control character");
        if (c == '\\') return refuse("backslash");
    }
    if (path.size() >= 2 && path[1] == ':') return refuse("drive letter");
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find('/', start);
        if (end == std::string_view::npos) end = path.size();
        std::string_view segment = path.substr(start, end - start);
        if (segment.empty()) return refuse("empty segment");
        if (segment == "." || segment == "..") return refuse("'.' or '..' segment");
        start = end + 1;
    }
    return Ok{};
}

Result<fs::path> destination(const fs::path& models_dir, const std::string& repo, std::string_view hub_path) {
    if (auto ok = check_hub_path(hub_path); !ok) return ok.error();
    return models_dir / fs::path(repo) / fs::path(std::string(hub_path));
}

Status check_inside(const fs::path& repo_dir, const fs::path& file) {
    std::error_code ec;
    fs::path root = fs::canonical(repo_dir, ec);
    if (ec) return Error{"cannot resolve " + repo_dir.string() + ": " + ec.message()};
    fs::path parent = fs::canonical(file.parent_path(), ec);
    if (ec) return Error{"cannot resolve " + file.parent_path().string() + ": " + ec.message()};
    auto [r, p] = std::mismatch(root.begin(), root.end(), parent.begin(), parent.end());
    if (r != root.end()) return Error{"refusing " + file.string() + ": its folder resolves to " + parent.string() + ", outside " + root.string()};
    if (fs::is_symlink(fs::symlink_status(file))) return Error{"refusing " + file.string() + ": it is a symbolic link"};
    return Ok{};
}

}  // namespace ember::hub

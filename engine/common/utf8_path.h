#pragma once
// Paths cross the engine as UTF-8 std::string. std::filesystem reads a narrow string in the
// system's code page on Windows (as UTF-8 elsewhere), so every conversion goes through these.

#include <filesystem>
#include <string>

namespace ember {

inline std::filesystem::path utf8_path(const std::string& s) {
    return std::filesystem::path(std::u8string(s.begin(), s.end()));
}

inline std::string utf8_string(const std::filesystem::path& p) {
    const std::u8string s = p.u8string();
    return std::string(s.begin(), s.end());
}

}  // namespace ember

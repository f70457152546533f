#include "ember/hub/settings.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "os_file.h"
#include "url.h"

namespace ember::hub {
namespace {

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

std::string trimmed(std::string s) {
    size_t b = s.find_first_not_of(" \t\r\n");
    size_t e = s.find_last_not_of(" \t\r\n");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// huggingface_hub's order: HF_TOKEN, the legacy variable, then the token file `hf auth login` wrote.
std::string token_from_environment() {
    if (auto t = trimmed(env("HF_TOKEN")); !t.empty()) return t;
    if (auto t = trimmed(env("HUGGING_FACE_HUB_TOKEN")); !t.empty()) return t;
    const std::string path = token_file_path();
    if (path.empty()) return {};
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return trimmed(line);
}

// Where Python's os.path.expanduser("~") points, from which huggingface_hub derives its cache:
// USERPROFILE on Windows (Python 3.8+ ignores HOME there), HOME elsewhere.
std::string user_home() {
#if defined(_WIN32)
    return env("USERPROFILE");
#else
    return env("HOME");
#endif
}

}  // namespace

std::string token_file_path() {
    std::string path = env("HF_TOKEN_PATH");
    if (!path.empty()) return path;
    std::string home = env("HF_HOME");
    if (home.empty()) {
        std::string xdg = env("XDG_CACHE_HOME");
        if (const std::string user = user_home(); xdg.empty() && !user.empty()) xdg = user + "/.cache";
        if (!xdg.empty()) home = xdg + "/huggingface";
    }
    return home.empty() ? std::string() : home + "/token";
}

Status check_token(const std::string& token) {
    // Tokens are ASCII (hf_ and letters and digits): any space inside, ASCII or not, is a typo.
    const std::string t = trimmed(token);
    const bool one_word = !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c > 0x20 && c < 0x7f; });
    if (!one_word) return Error{"a Hugging Face token is one word (hf_…)"};
    return Ok{};
}

Status save_token(const std::string& token) {
    const std::string path = token_file_path();
    if (path.empty()) return Error{"no place for the token: the home folder, HF_HOME and HF_TOKEN_PATH are all unset"};
    if (auto ok = check_token(token); !ok) return ok;
    const std::string t = trimmed(token);
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    // Readable by its owner only from the first byte, and renamed into place whole.
    const std::string tmp = path + ".tmp";
    auto opened = OsFile::open(std::filesystem::path(tmp), OsFile::Access::CreatePrivate);
    if (auto* e = std::get_if<OsError>(&opened)) return Error{"cannot write " + tmp + ": " + e->text};
    OsFile file = std::move(std::get<OsFile>(opened));
    const std::string line = t + "\n";
    auto failed = file.write_at(line.data(), line.size(), 0);
    if (!failed) failed = file.sync();
    file.close();
    if (!failed) failed = replace_file(std::filesystem::path(tmp), std::filesystem::path(path));
    if (failed) {
        std::filesystem::remove(std::filesystem::path(tmp), ec);
        return Error{"cannot write " + path + ": " + failed->text};
    }
    return Ok{};
}

Status forget_token() {
    const std::string path = token_file_path();
    std::error_code ec;
    if (path.empty() || std::filesystem::remove(std::filesystem::path(path), ec) || !ec) return Ok{};
    return Error{"cannot remove " + path + ": " + ec.message()};
}

Status check_endpoint(const std::string& endpoint) {
    if (!url::origin(endpoint)) return Error{"HF_ENDPOINT '" + endpoint + "' is not a URL"};
    if (endpoint.rfind("https://", 0) == 0) return Ok{};
    if (endpoint.rfind("http://", 0) == 0 && url::is_loopback(endpoint)) return Ok{};
    return Error{"HF_ENDPOINT '" + endpoint + "' must use https (plain http only for a loopback host)"};
}

Result<Settings> Settings::from_environment() {
    Settings s;
    if (auto e = trimmed(env("HF_ENDPOINT")); !e.empty()) {
        while (!e.empty() && e.back() == '/') e.pop_back();
        s.endpoint = e;
    }
    if (auto ok = check_endpoint(s.endpoint); !ok) return ok.error();
    s.token = token_from_environment();
    // huggingface_hub's download timeout (seconds without data), which users already set for slow links.
    if (auto t = trimmed(env("HF_HUB_DOWNLOAD_TIMEOUT")); !t.empty()) {
        char* end = nullptr;
        const double seconds = std::strtod(t.c_str(), &end);
        if (end == t.c_str() || *end != '\0' || !(seconds >= 1 && seconds <= 3600))
            return Error{"HF_HUB_DOWNLOAD_TIMEOUT '" + t + "' is not a number of seconds between 1 and 3600"};
        s.stall_timeout = std::chrono::seconds(static_cast<long>(seconds));
    }
    return s;
}

}  // namespace ember::hub

#pragma once
// Small helpers shared by the command-line tools: strict number parsing with errors that
// name the flag and the bad value.

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ember::tools {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline long long parse_int(const std::string& flag, const std::string& value, long long min, long long max) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || errno == ERANGE || v < min || v > max)
        throw UsageError(flag + ": '" + value + "' is not an integer in [" + std::to_string(min) + ", " +
                         std::to_string(max) + "]");
    return v;
}

inline float parse_float(const std::string& flag, const std::string& value) {
    char* end = nullptr;
    errno = 0;
    const float v = std::strtof(value.c_str(), &end);
    if (value.empty() || *end != '\0' || errno == ERANGE || v != v)
        throw UsageError(flag + ": '" + value + "' is not a number");
    return v;
}

// A whole file's bytes, or nullopt when it cannot be read.
// A size given in GiB ("1.5"), in bytes.
inline uint64_t parse_gib(const std::string& flag, const std::string& value) {
    const float gib = parse_float(flag, value);
    if (!(gib >= 0.0f)) throw UsageError(flag + ": must not be negative");
    return uint64_t(double(gib) * double(uint64_t(1) << 30));
}

inline std::optional<std::string> read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream ss;
    ss << in.rdbuf();
    return std::move(ss).str();
}

// Returns argv[i + 1] and advances i, or throws naming the flag.
inline std::string next_value(int argc, char** argv, int& i) {
    if (i + 1 >= argc) throw UsageError(std::string(argv[i]) + ": missing value");
    return argv[++i];
}

}  // namespace ember::tools

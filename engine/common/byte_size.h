#pragma once
// A byte count as a person reads it in a message: "830 bytes", "12.0 MiB", "1.25 GiB".

#include <cstdint>
#include <cstdio>
#include <string>

namespace ember {

inline std::string byte_size(uint64_t bytes) {
    char buf[32];
    if (bytes < 1024) return std::to_string(bytes) + " bytes";
    if (bytes < (uint64_t(1) << 20)) std::snprintf(buf, sizeof buf, "%.1f KiB", double(bytes) / 1024.0);
    else if (bytes < (uint64_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(1u << 20));
    else std::snprintf(buf, sizeof buf, "%.2f GiB", double(bytes) / double(1u << 30));
    return buf;
}

}  // namespace ember

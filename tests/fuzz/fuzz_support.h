#pragma once
// Shared by the fuzz targets. Readers that take a path (they map the file) get each input as an
// in-memory file (memfd) through its /proc/self/fd path, so fuzzing touches no disk.

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace ember::fuzz {

class MemoryFile {
public:
    MemoryFile(const uint8_t* data, size_t size, const char* name) : fd_(memfd_create(name, 0)) {
        if (fd_ < 0) std::abort();
        for (size_t done = 0; done < size;) {
            const ssize_t n = write(fd_, data + done, size - done);
            if (n <= 0) std::abort();
            done += size_t(n);
        }
        path_ = "/proc/self/fd/" + std::to_string(fd_);
    }
    ~MemoryFile() { close(fd_); }
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;

    const std::string& path() const { return path_; }

private:
    int fd_;
    std::string path_;
};

// A property the target checks failed: report it the way libFuzzer reports a crash.
[[noreturn]] inline void fail(const char* what) {
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
}

}  // namespace ember::fuzz

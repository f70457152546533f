#pragma once
// The "<name>.part" file a download grows in: appended to, locked against a second downloader,
// fsynced and renamed into place only once verified.

#include <cstdint>
#include <filesystem>
#include <string>

#include "ember/hub/result.h"

namespace ember::hub {

class PartFile {
public:
    // Creates or reopens `path`; fails if another process is downloading into it.
    static Result<PartFile> open(const std::filesystem::path& path);
    PartFile(PartFile&& other) noexcept;
    PartFile& operator=(PartFile&& other) noexcept;
    ~PartFile();

    const std::filesystem::path& path() const { return path_; }
    uint64_t size() const { return size_; }

    // Appends all of `data`; on failure keeps errno for write_error().
    bool append(const char* data, size_t n);
    Error write_error() const;
    Status truncate();
    // fsync, rename to `final_path`, fsync the folder: the final name only ever holds a whole file.
    Status commit(const std::filesystem::path& final_path);
    void remove();

private:
    PartFile(std::filesystem::path path, int fd, uint64_t size);
    void close();

    std::filesystem::path path_;
    int fd_ = -1;
    uint64_t size_ = 0;
    uint64_t written_back_ = 0;  // bytes handed to the kernel's writeback so far
    int errno_ = 0;
};

}  // namespace ember::hub

#pragma once
// The "<name>.part" file a download grows in: appended to, locked against a second downloader,
// fsynced and renamed into place only once verified.

#include <cstdint>
#include <filesystem>
#include <string>

#include "ember/hub/result.h"
#include "os_file.h"

namespace ember::hub {

class PartFile {
public:
    // Creates or reopens `path`; fails if another process is downloading into it.
    static Result<PartFile> open(const std::filesystem::path& path);

    const std::filesystem::path& path() const { return path_; }
    uint64_t size() const { return size_; }

    // Appends all of `data`; on failure keeps the reason for write_error().
    bool append(const char* data, size_t n);
    Error write_error() const;
    Status truncate();
    // Sync, rename to `final_path`, sync the folder: the final name only ever holds a whole file.
    Status commit(const std::filesystem::path& final_path);
    void remove();

private:
    PartFile(std::filesystem::path path, OsFile file, uint64_t size);

    std::filesystem::path path_;
    OsFile file_;
    uint64_t size_ = 0;
    uint64_t written_back_ = 0;  // bytes handed to the system's writeback so far
    OsError write_error_;
};

}  // namespace ember::hub

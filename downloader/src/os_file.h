#pragma once
// The file operations the downloader needs beyond std::filesystem: positional reads and writes,
// a writer that keeps a second process out, durable renames. One implementation per system:
// os_file_posix.cpp, os_file_windows.cpp.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>

namespace ember::hub {

struct OsError {
    std::string text;        // the system's own words
    bool disk_full = false;  // no space, quota or file size limit reached
    bool in_use = false;     // another writer holds the file (OsFile::Access::ExclusiveWrite)
};

class OsFile {
public:
    enum class Access {
        Read,            // an existing file; writers and renames may go on beside it
        ExclusiveWrite,  // created if missing, kept if present; in_use while another handle writes it
        CreatePrivate,   // created empty (or emptied), readable by its owner only
    };

    static std::variant<OsFile, OsError> open(const std::filesystem::path& path, Access access);
    OsFile() = default;
    OsFile(OsFile&& other) noexcept;
    OsFile& operator=(OsFile&& other) noexcept;
    OsFile(const OsFile&) = delete;
    OsFile& operator=(const OsFile&) = delete;
    ~OsFile();

    std::variant<uint64_t, OsError> size() const;
    // All `n` bytes at `offset`, or the reason none or only some were written.
    std::optional<OsError> write_at(const char* data, size_t n, uint64_t offset);
    // Up to `n` bytes at `offset`; 0 at the end of the file.
    std::variant<size_t, OsError> read_at(void* data, size_t n, uint64_t offset) const;
    std::optional<OsError> truncate();
    std::optional<OsError> sync();
    // Asks the system to start writing [offset, offset+n) to disk now, so a later sync() finds
    // little left; a hint that does nothing where the system has no such call.
    void start_writeback(uint64_t offset, uint64_t n);
    void close();

private:
#if defined(_WIN32)
    using Native = void*;  // a HANDLE; CreateFileW never returns a null one for an open file
    static constexpr Native kClosed = nullptr;
#else
    using Native = int;
    static constexpr Native kClosed = -1;
#endif
    explicit OsFile(Native handle) : handle_(handle) {}
    Native handle_ = kClosed;
};

// Renames `from` over `to` (replacing a file there) so that once it returns, a power cut leaves
// `to` whole; the folder entry itself is made durable by sync_folder.
std::optional<OsError> replace_file(const std::filesystem::path& from, const std::filesystem::path& to);
std::optional<OsError> sync_folder(const std::filesystem::path& dir);

}  // namespace ember::hub

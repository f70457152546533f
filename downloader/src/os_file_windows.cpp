// The Windows half of OsFile: positioned ReadFile/WriteFile on a HANDLE; the exclusive writer is
// a share mode that lets others read (the hasher) and rename, but not write.
#if defined(_WIN32)
#define NOMINMAX
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <algorithm>

#include "os_file.h"

namespace ember::hub {
namespace {

OsError os_error(DWORD code) {
    wchar_t* text = nullptr;
    FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                   code, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
    std::string utf8;
    if (text) {
        const int n = WideCharToMultiByte(CP_UTF8, 0, text, -1, nullptr, 0, nullptr, nullptr);
        if (n > 1) {
            utf8.resize(size_t(n - 1));
            WideCharToMultiByte(CP_UTF8, 0, text, -1, utf8.data(), n, nullptr, nullptr);
        }
        LocalFree(text);
    }
    while (!utf8.empty() && (utf8.back() == '\n' || utf8.back() == '\r' || utf8.back() == '.')) utf8.pop_back();
    if (utf8.empty()) utf8 = "Windows error " + std::to_string(code);
    OsError e{utf8};
    e.disk_full = code == ERROR_DISK_FULL || code == ERROR_HANDLE_DISK_FULL || code == ERROR_FILE_TOO_LARGE;
    e.in_use = code == ERROR_SHARING_VIOLATION || code == ERROR_LOCK_VIOLATION;
    return e;
}

OsError last_error() { return os_error(GetLastError()); }

OVERLAPPED at(uint64_t offset) {
    OVERLAPPED o{};
    o.Offset = DWORD(offset & 0xffffffffu);
    o.OffsetHigh = DWORD(offset >> 32);
    return o;
}

// ReadFile and WriteFile take a DWORD count.
constexpr size_t kMaxIo = size_t(1) << 30;

}  // namespace

std::variant<OsFile, OsError> OsFile::open(const std::filesystem::path& path, Access access) {
    DWORD rights = GENERIC_READ, share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, how = OPEN_EXISTING;
    DWORD attributes = FILE_ATTRIBUTE_NORMAL;
    switch (access) {
        case Access::Read: break;
        case Access::ExclusiveWrite:
            rights = GENERIC_READ | GENERIC_WRITE;
            share = FILE_SHARE_READ | FILE_SHARE_DELETE;
            how = OPEN_ALWAYS;
            break;
        case Access::CreatePrivate:
            // The user's profile folders are already private to the user; nothing to add to the ACL.
            rights = GENERIC_WRITE;
            share = 0;
            how = CREATE_ALWAYS;
            break;
    }
    HANDLE h = CreateFileW(path.c_str(), rights, share, nullptr, how, attributes, nullptr);
    if (h == INVALID_HANDLE_VALUE) return last_error();
    return OsFile(h);
}

void OsFile::close() {
    if (handle_ != kClosed) CloseHandle(handle_);
    handle_ = kClosed;
}

std::variant<uint64_t, OsError> OsFile::size() const {
    LARGE_INTEGER n{};
    if (!GetFileSizeEx(handle_, &n)) return last_error();
    return uint64_t(n.QuadPart);
}

std::optional<OsError> OsFile::write_at(const char* data, size_t n, uint64_t offset) {
    while (n > 0) {
        OVERLAPPED o = at(offset);
        DWORD wrote = 0;
        if (!WriteFile(handle_, data, DWORD(std::min(n, kMaxIo)), &wrote, &o)) return last_error();
        if (wrote == 0) return os_error(ERROR_DISK_FULL);
        data += wrote;
        n -= wrote;
        offset += wrote;
    }
    return std::nullopt;
}

std::variant<size_t, OsError> OsFile::read_at(void* data, size_t n, uint64_t offset) const {
    OVERLAPPED o = at(offset);
    DWORD got = 0;
    if (!ReadFile(handle_, data, DWORD(std::min(n, kMaxIo)), &got, &o)) {
        const DWORD code = GetLastError();
        if (code == ERROR_HANDLE_EOF) return size_t(0);
        return os_error(code);
    }
    return size_t(got);
}

std::optional<OsError> OsFile::truncate() {
    FILE_END_OF_FILE_INFO end{};
    if (!SetFileInformationByHandle(handle_, FileEndOfFileInfo, &end, sizeof end)) return last_error();
    return std::nullopt;
}

std::optional<OsError> OsFile::sync() {
    if (!FlushFileBuffers(handle_)) return last_error();
    return std::nullopt;
}

void OsFile::start_writeback(uint64_t, uint64_t) {}

std::optional<OsError> replace_file(const std::filesystem::path& from, const std::filesystem::path& to) {
    // WRITE_THROUGH: returns once the rename is on disk, which is what sync_folder does elsewhere.
    if (!MoveFileExW(from.c_str(), to.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return last_error();
    return std::nullopt;
}

std::optional<OsError> sync_folder(const std::filesystem::path&) { return std::nullopt; }

}  // namespace ember::hub
#endif

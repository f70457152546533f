// The POSIX half of OsFile: pread/pwrite on a descriptor, flock for the exclusive writer.
#if !defined(_WIN32)
#include "os_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ember::hub {
namespace {

OsError os_error(int err) {
    OsError e{std::strerror(err)};
    e.disk_full = err == ENOSPC || err == EDQUOT || err == EFBIG;
    return e;
}

}  // namespace

std::variant<OsFile, OsError> OsFile::open(const std::filesystem::path& path, Access access) {
    int flags = O_CLOEXEC;
    mode_t mode = 0644;
    switch (access) {
        case Access::Read: flags |= O_RDONLY; break;
        case Access::ExclusiveWrite: flags |= O_RDWR | O_CREAT | O_NOFOLLOW; break;
        case Access::CreatePrivate:
            flags |= O_WRONLY | O_CREAT | O_TRUNC;
            mode = 0600;
            break;
    }
    const int fd = ::open(path.c_str(), flags, mode);
    if (fd < 0) return os_error(errno);
    OsFile file(fd);
    // flock, not fcntl locks: those belong to the process and would not keep out a second
    // downloader inside the same program.
    if (access == Access::ExclusiveWrite && ::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        OsError e = os_error(err);
        e.in_use = err == EWOULDBLOCK;
        return e;
    }
    return file;
}

void OsFile::close() {
    if (handle_ != kClosed) ::close(handle_);
    handle_ = kClosed;
}

std::variant<uint64_t, OsError> OsFile::size() const {
    struct stat st {};
    if (::fstat(handle_, &st) != 0) return os_error(errno);
    return uint64_t(st.st_size);
}

std::optional<OsError> OsFile::write_at(const char* data, size_t n, uint64_t offset) {
    while (n > 0) {
        const ssize_t w = ::pwrite(handle_, data, n, off_t(offset));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return os_error(errno);
        if (w == 0) return os_error(ENOSPC);
        data += w;
        n -= size_t(w);
        offset += uint64_t(w);
    }
    return std::nullopt;
}

std::variant<size_t, OsError> OsFile::read_at(void* data, size_t n, uint64_t offset) const {
    for (;;) {
        const ssize_t got = ::pread(handle_, data, n, off_t(offset));
        if (got >= 0) return size_t(got);
        if (errno != EINTR) return os_error(errno);
    }
}

std::optional<OsError> OsFile::truncate() {
    if (::ftruncate(handle_, 0) != 0) return os_error(errno);
    return std::nullopt;
}

std::optional<OsError> OsFile::sync() {
#if defined(F_FULLFSYNC)
    // macOS's fsync stops at the drive's cache; F_FULLFSYNC reaches the platter. Some file
    // systems refuse it, and then fsync is the best there is.
    if (::fcntl(handle_, F_FULLFSYNC) == 0) return std::nullopt;
#endif
    if (::fsync(handle_) != 0) return os_error(errno);
    return std::nullopt;
}

void OsFile::start_writeback([[maybe_unused]] uint64_t offset, [[maybe_unused]] uint64_t n) {
#if defined(__linux__)
    ::sync_file_range(handle_, off_t(offset), off_t(n), SYNC_FILE_RANGE_WRITE);
#endif
}

std::optional<OsError> replace_file(const std::filesystem::path& from, const std::filesystem::path& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) return os_error(errno);
    return std::nullopt;
}

std::optional<OsError> sync_folder(const std::filesystem::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return os_error(errno);
    const int rc = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (rc != 0) return os_error(err);
    return std::nullopt;
}

}  // namespace ember::hub
#endif

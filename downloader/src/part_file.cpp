#include "part_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace ember::hub {

namespace {

// Start writeback every this many bytes, so the fsync before the rename finds little left to do
// and a multi-GB download never piles up gigabytes of dirty pages.
constexpr uint64_t writeback_bytes = 32u << 20;

std::string os_error(const std::string& what, const std::filesystem::path& path, int err) {
    return what + " " + path.string() + ": " + std::strerror(err);
}

Status fsync_dir(const std::filesystem::path& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return Error{os_error("cannot open folder", dir, errno)};
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) return Error{os_error("cannot fsync folder", dir, err)};
    return Ok{};
}

}  // namespace

Result<PartFile> PartFile::open(const std::filesystem::path& path) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) return Error{os_error("cannot open", path, errno)};
    // A second downloader (the app and ember-hub at once) must not interleave into one file.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int err = errno;
        ::close(fd);
        if (err == EWOULDBLOCK) return Error{path.string() + " is being downloaded by another process"};
        return Error{os_error("cannot lock", path, err)};
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int err = errno;
        ::close(fd);
        return Error{os_error("cannot stat", path, err)};
    }
    return PartFile(path, fd, uint64_t(st.st_size));
}

PartFile::PartFile(std::filesystem::path path, int fd, uint64_t size)
    : path_(std::move(path)), fd_(fd), size_(size), written_back_(size) {}

PartFile::PartFile(PartFile&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      written_back_(other.written_back_),
      errno_(other.errno_) {}

PartFile& PartFile::operator=(PartFile&& other) noexcept {
    if (this != &other) {
        close();
        path_ = std::move(other.path_);
        fd_ = std::exchange(other.fd_, -1);
        size_ = other.size_;
        written_back_ = other.written_back_;
        errno_ = other.errno_;
    }
    return *this;
}

PartFile::~PartFile() { close(); }

void PartFile::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

bool PartFile::append(const char* data, size_t n) {
    while (n > 0) {
        ssize_t w = ::pwrite(fd_, data, n, off_t(size_));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            errno_ = w < 0 ? errno : ENOSPC;
            return false;
        }
        data += w;
        n -= size_t(w);
        size_ += uint64_t(w);
    }
    if (size_ - written_back_ >= writeback_bytes) {
        ::sync_file_range(fd_, off_t(written_back_), off_t(size_ - written_back_), SYNC_FILE_RANGE_WRITE);
        written_back_ = size_;
    }
    return true;
}

Error PartFile::write_error() const {
    if (errno_ == ENOSPC || errno_ == EDQUOT || errno_ == EFBIG) {
        return Error{"disk full writing " + path_.string() + " (" + std::strerror(errno_) + ")"};
    }
    return Error{os_error("cannot write", path_, errno_)};
}

Status PartFile::truncate() {
    if (::ftruncate(fd_, 0) != 0) return Error{os_error("cannot truncate", path_, errno)};
    size_ = 0;
    written_back_ = 0;
    return Ok{};
}

Status PartFile::commit(const std::filesystem::path& final_path) {
    if (::fsync(fd_) != 0) return Error{os_error("cannot fsync", path_, errno)};
    if (::rename(path_.c_str(), final_path.c_str()) != 0) {
        return Error{"cannot rename " + path_.string() + " to " + final_path.string() + ": " + std::strerror(errno)};
    }
    close();
    return fsync_dir(final_path.parent_path());
}

void PartFile::remove() {
    ::unlink(path_.c_str());
    close();
    size_ = 0;
    written_back_ = 0;
}

}  // namespace ember::hub

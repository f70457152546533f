// The POSIX half of MappedFile: mmap, or pread into anonymous memory.
#if !defined(_WIN32)
#include "gguf/mapped_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"

namespace ember::gguf {

namespace {

// Reads the whole file into fresh anonymous memory.
const uint8_t* copy_into_memory(int fd, size_t size, const std::string& path, const MappedFile::Progress& progress) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
#if defined(MADV_HUGEPAGE)  // Linux
    ::madvise(p, size, MADV_HUGEPAGE);
#endif
    auto* dst = static_cast<uint8_t*>(p);
    size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, dst + done, std::min<size_t>(size - done, size_t(1) << 26), off_t(done));
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            ::munmap(p, size);
            fail(path + ": read failed at byte " + std::to_string(done) + ": " + std::strerror(err));
        }
        done += size_t(n);
        if (progress && !progress(float(double(done) / double(size)))) {
            ::munmap(p, size);
            fail(path + ": loading cancelled");
        }
    }
    return dst;
}

}  // namespace

MappedFile::MappedFile(const std::string& path, Mode mode, const Progress& progress) {
    struct Fd {
        int fd;
        ~Fd() {
            if (fd >= 0) ::close(fd);
        }
    } file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
    if (file.fd < 0) fail(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) fail(path + ": cannot stat: " + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) fail(path + ": not a regular file");
    const size_t size = size_t(st.st_size);
    if (size == 0) return;
    if (mode == Mode::Copy) {
        data_ = copy_into_memory(file.fd, size, path, progress);
        if (!data_) fail(path + ": cannot allocate " + std::to_string(size) + " bytes to load the file: " + std::strerror(errno));
        writable_ = true;
    } else {
        void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
        if (p == MAP_FAILED) fail(path + ": cannot map " + std::to_string(size) + " bytes: " + std::strerror(errno));
        data_ = static_cast<const uint8_t*>(p);
    }
    size_ = size;
}

void MappedFile::seal() {
    if (writable_) ::mprotect(const_cast<uint8_t*>(data_), size_, PROT_READ);
    writable_ = false;
}

void MappedFile::release() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
    writable_ = false;
}

}  // namespace ember::gguf

#endif

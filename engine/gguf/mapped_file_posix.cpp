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

// Replaces the map's pages [begin, end) with anonymous memory holding the same bytes of `path`.
void read_into_place(const std::string& path, uint8_t* base, uint64_t begin, uint64_t end) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail(path + ": cannot open: " + std::strerror(errno));
    uint8_t* at = base + begin;
    const size_t length = size_t(end - begin);
    void* p = ::mmap(at, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        fail(path + ": cannot allocate " + std::to_string(length) + " bytes of memory: " + std::strerror(err));
    }
    size_t done = 0;
    while (done < length) {
        const ssize_t got = ::pread(fd, at + done, length - done, off_t(begin + done));
        if (got <= 0) {
            const int err = got < 0 ? errno : EIO;
            ::close(fd);
            fail(path + ": read failed at byte " + std::to_string(begin + done) + ": " + std::strerror(err));
        }
        done += size_t(got);
    }
    ::close(fd);
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
    path_ = path;
}

void MappedFile::make_resident(uint64_t offset, uint64_t n) {
    if (writable_ || sealed_ || !data_) fail(path_ + ": only a map not yet sealed has parts made resident");
    if (offset > size_ || n > size_ - offset) fail(path_ + ": bytes past the end made resident");
    const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
    const uint64_t begin = offset / page * page, end = std::min<uint64_t>((offset + n + page - 1) / page * page, size_);
    if (begin >= end) return;
    // resident_ is sorted, its ranges neither overlapping nor touching. Only the gaps between the
    // ranges [begin, end) meets are read, so a part read earlier, and maybe re-laid since, keeps
    // its bytes; then those ranges and [begin, end) become one.
    auto first = std::lower_bound(resident_.begin(), resident_.end(), begin,
                                  [](const std::pair<uint64_t, uint64_t>& r, uint64_t at) { return r.second < at; });
    auto last = first;
    uint64_t at = begin;
    for (; last != resident_.end() && last->first <= end; ++last) {
        if (at < last->first) read_into_place(path_, const_cast<uint8_t*>(data_), at, last->first);
        at = std::max(at, last->second);
    }
    if (at < end) read_into_place(path_, const_cast<uint8_t*>(data_), at, end);
    const std::pair<uint64_t, uint64_t> merged{first == last ? begin : std::min(begin, first->first),
                                               first == last ? end : std::max(end, std::prev(last)->second)};
    resident_.insert(resident_.erase(first, last), merged);
}

void MappedFile::seal() {
    if (writable_) ::mprotect(const_cast<uint8_t*>(data_), size_, PROT_READ);
    for (const auto& [begin, end] : resident_) ::mprotect(const_cast<uint8_t*>(data_) + begin, size_t(end - begin), PROT_READ);
    writable_ = false;
    sealed_ = true;
}

void prefetch_pages(const void* p, size_t n) {
    if (n == 0) return;
    const uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
    const uintptr_t begin = reinterpret_cast<uintptr_t>(p) / page * page;
    ::madvise(reinterpret_cast<void*>(begin), size_t(reinterpret_cast<uintptr_t>(p) + n - begin), MADV_WILLNEED);
}

void MappedFile::release() {
    if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
    writable_ = false;
}

}  // namespace ember::gguf

#endif

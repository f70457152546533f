// The Windows half of MappedFile: a read-only view of a file mapping, or ReadFile into
// VirtualAlloc'd memory.
#if defined(_WIN32)
#define NOMINMAX
#define WIN32_LEAN_AND_MEAN
#include <windows.h>

#include <algorithm>

#include "common/error.h"
#include "common/utf8_path.h"
#include "gguf/mapped_file.h"

namespace ember::gguf {
namespace {

std::string last_error() {
    const DWORD code = GetLastError();
    char* text = nullptr;
    FormatMessageA(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr,
                   code, 0, reinterpret_cast<char*>(&text), 0, nullptr);
    std::string s = text ? text : "error " + std::to_string(code);
    if (text) LocalFree(text);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == '.')) s.pop_back();
    return s;
}

struct Handle {
    HANDLE h;
    ~Handle() {
        if (h && h != INVALID_HANDLE_VALUE) CloseHandle(h);
    }
};

}  // namespace

MappedFile::MappedFile(const std::string& path, Mode mode, const Progress& progress) {
    Handle file{CreateFileW(utf8_path(path).c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, nullptr,
                            OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_SEQUENTIAL_SCAN, nullptr)};
    if (file.h == INVALID_HANDLE_VALUE) fail(path + ": cannot open: " + last_error());
    BY_HANDLE_FILE_INFORMATION info{};
    if (!GetFileInformationByHandle(file.h, &info)) fail(path + ": cannot stat: " + last_error());
    if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) fail(path + ": not a regular file");
    const size_t size = size_t((uint64_t(info.nFileSizeHigh) << 32) | info.nFileSizeLow);
    if (size == 0) return;
    if (mode == Mode::Copy) {
        void* p = VirtualAlloc(nullptr, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
        if (!p) fail(path + ": cannot allocate " + std::to_string(size) + " bytes to load the file: " + last_error());
        auto* dst = static_cast<uint8_t*>(p);
        size_t done = 0;
        while (done < size) {
            DWORD got = 0;
            const DWORD want = DWORD(std::min<size_t>(size - done, size_t(1) << 26));
            const bool read = ReadFile(file.h, dst + done, want, &got, nullptr);
            if (!read || got == 0) {
                // ReadFile succeeds with no bytes at the end of the file; GetLastError is stale then.
                const std::string why = read ? "the file ended early" : last_error();
                VirtualFree(p, 0, MEM_RELEASE);
                fail(path + ": read failed at byte " + std::to_string(done) + ": " + why);
            }
            done += got;
            if (progress && !progress(float(double(done) / double(size)))) {
                VirtualFree(p, 0, MEM_RELEASE);
                fail(path + ": loading cancelled");
            }
        }
        data_ = dst;
        writable_ = true;
    } else {
        Handle mapping{CreateFileMappingW(file.h, nullptr, PAGE_READONLY, 0, 0, nullptr)};
        if (!mapping.h) fail(path + ": cannot map " + std::to_string(size) + " bytes: " + last_error());
        void* p = MapViewOfFile(mapping.h, FILE_MAP_READ, 0, 0, 0);
        if (!p) fail(path + ": cannot map " + std::to_string(size) + " bytes: " + last_error());
        data_ = static_cast<const uint8_t*>(p);
    }
    size_ = size;
    path_ = path;
}

void MappedFile::seal() {
    DWORD previous = 0;
    if (writable_) VirtualProtect(const_cast<uint8_t*>(data_), size_, PAGE_READONLY, &previous);
    writable_ = false;
    sealed_ = true;
}

// A view of a file mapping cannot have some of its pages replaced by private memory.
void MappedFile::make_resident(uint64_t, uint64_t) {
    fail(path_ + ": keeping only part of a model in memory needs Linux or another POSIX system");
}

// make_resident() never succeeds here, so no map has parts that are read on demand to prefetch.
void prefetch_pages(const void*, size_t) {}

// A copy is private memory, a map a view of a section: the region's type says which.
void MappedFile::release() {
    if (data_) {
        MEMORY_BASIC_INFORMATION region{};
        VirtualQuery(data_, &region, sizeof region);
        if (region.Type == MEM_MAPPED)
            UnmapViewOfFile(data_);
        else
            VirtualFree(const_cast<uint8_t*>(data_), 0, MEM_RELEASE);
    }
    data_ = nullptr;
    size_ = 0;
    writable_ = false;
}

}  // namespace ember::gguf

#endif

#include "gguf/mapped_file.h"

#include <algorithm>

namespace ember::gguf {

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), writable_(other.writable_), path_(std::move(other.path_)),
      resident_(std::move(other.resident_)), sealed_(other.sealed_) {
    other.data_ = nullptr;
    other.size_ = 0;
    other.writable_ = false;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        release();
        data_ = other.data_;
        size_ = other.size_;
        writable_ = other.writable_;
        path_ = std::move(other.path_);
        resident_ = std::move(other.resident_);
        sealed_ = other.sealed_;
        other.data_ = nullptr;
        other.size_ = 0;
        other.writable_ = false;
    }
    return *this;
}

uint8_t* MappedFile::writable_range(uint64_t offset, uint64_t n) const {
    if (writable_) return const_cast<uint8_t*>(data_) + offset;
    if (sealed_) return nullptr;
    // The last resident range starting at or before offset (they are sorted and apart).
    auto r = std::upper_bound(resident_.begin(), resident_.end(), offset,
                              [](uint64_t at, const std::pair<uint64_t, uint64_t>& range) { return at < range.first; });
    if (r == resident_.begin() || offset + n > std::prev(r)->second) return nullptr;
    return const_cast<uint8_t*>(data_) + offset;
}

}  // namespace ember::gguf

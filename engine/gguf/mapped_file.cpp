#include "gguf/mapped_file.h"

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
    for (const auto& [begin, end] : resident_)
        if (begin <= offset && offset + n <= end) return const_cast<uint8_t*>(data_) + offset;
    return nullptr;
}

}  // namespace ember::gguf

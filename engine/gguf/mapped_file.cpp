#include "gguf/mapped_file.h"

namespace ember::gguf {

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), writable_(other.writable_) {
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
        other.data_ = nullptr;
        other.size_ = 0;
        other.writable_ = false;
    }
    return *this;
}

}  // namespace ember::gguf

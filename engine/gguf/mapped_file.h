#pragma once
// A read-only, private memory map of a whole file.

#include <cstddef>
#include <cstdint>
#include <string>

namespace ember::gguf {

class MappedFile {
public:
    MappedFile() = default;
    explicit MappedFile(const std::string& path);  // throws EngineError naming the path
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }

private:
    void release();
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
};

}  // namespace ember::gguf

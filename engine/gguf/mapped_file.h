#pragma once
// A whole file in memory, read-only: a private map of the file (pages come and go with the
// page cache), or, on request, a copy in anonymous memory (resident: the kernel cannot drop
// it under memory pressure or a reclaim daemon, and it may use huge pages).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace ember::gguf {

class MappedFile {
public:
    MappedFile() = default;
    enum class Mode { Map, Copy };
    // Called with the fraction read so far while copying; returning false cancels the load.
    using Progress = std::function<bool(float fraction)>;
    // Throws EngineError naming the path (also when the progress callback cancels).
    explicit MappedFile(const std::string& path, Mode mode = Mode::Map, const Progress& progress = {});
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const uint8_t* data() const { return data_; }
    size_t size() const { return size_; }
    // A copy stays writable until seal(), so its loader may re-lay tensors in place; null for
    // a map and after seal().
    uint8_t* writable_data() const { return writable_ ? const_cast<uint8_t*>(data_) : nullptr; }
    // Makes a copy read-only from here on.
    void seal();

private:
    void release();
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    bool writable_ = false;
};

}  // namespace ember::gguf

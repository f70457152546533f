#pragma once
// A whole file in memory, read-only: a private map of the file (pages come and go with the
// page cache), or, on request, a copy in anonymous memory (resident: the kernel cannot drop
// it under memory pressure or a reclaim daemon, and it may use huge pages). A map may also have
// chosen parts read into anonymous memory at their own addresses, the rest staying pages of the
// file that are read when touched.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

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
    // Makes a copy, or a map's resident parts, read-only from here on.
    void seal();

    // A map only, before seal(): reads the pages holding bytes [offset, offset + n) into
    // anonymous memory at the same addresses, which then stay in memory and may be re-laid until
    // seal(). POSIX systems only; throws EngineError naming the path.
    void make_resident(uint64_t offset, uint64_t n);
    // Bytes [offset, offset + n) to re-lay in place: a copy's, so that its loader may re-lay
    // tensors, or a map's when they lie in its resident parts; null after seal() and otherwise.
    uint8_t* writable_range(uint64_t offset, uint64_t n) const;

private:
    void release();
    const uint8_t* data_ = nullptr;
    size_t size_ = 0;
    bool writable_ = false;
    std::string path_;
    // A map's resident byte ranges [begin, end), whole pages, sorted, neither overlapping nor touching.
    std::vector<std::pair<uint64_t, uint64_t>> resident_;
    bool sealed_ = false;
};

// Asks the system to start reading [p, p + n) of a map from its file now, so that a later touch
// finds the pages in memory; nothing where it cannot.
void prefetch_pages(const void* p, size_t n);

}  // namespace ember::gguf

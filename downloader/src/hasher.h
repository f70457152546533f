#pragma once
// Hashes files from disk right behind the thread that writes them, so a download is verified
// the moment its last byte lands, at wire speed, without a second pass or holding data in memory.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ember/hub/result.h"

namespace ember::hub {

enum class DigestKind {
    Sha256,       // LFS files: the Hub's lfs.oid
    GitBlobSha1,  // files in git itself: SHA-1 of "blob <size>\0" + content, the tree's oid
};

class Hasher {
public:
    struct Stream;

    // on_result runs on the hashing thread whenever a stream's digest becomes ready.
    explicit Hasher(std::function<void()> on_result);
    ~Hasher();
    Hasher(const Hasher&) = delete;
    Hasher& operator=(const Hasher&) = delete;

    // Opens its own read handle on `file`, whose final size will be `size`.
    Result<std::shared_ptr<Stream>> open(const std::filesystem::path& file, DigestKind kind, uint64_t size);
    // The first `written` bytes of the file are on disk.
    void advance(Stream& s, uint64_t written);
    // Runs `truncate` (which empties the file) while no read is in flight, and starts over.
    void restart(Stream& s, const std::function<void()>& truncate);
    // All `size` bytes are written: produce the digest once caught up.
    void finish(Stream& s);
    // Lower-case hex digest, or a read error; nullopt until ready.
    std::optional<Result<std::string>> result(Stream& s);
    void close(const std::shared_ptr<Stream>& s);

private:
    void run();
    std::shared_ptr<Stream> next_with_work();
    bool hash_some(Stream& s);  // true when the digest became ready

    std::function<void()> on_result_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<std::shared_ptr<Stream>> streams_;
    size_t next_ = 0;
    bool stop_ = false;
    std::vector<unsigned char> buffer_;
    std::thread thread_;
};

}  // namespace ember::hub

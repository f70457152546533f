#include "hasher.h"

#include <openssl/evp.h>

#include "os_file.h"

namespace ember::hub {

namespace {
constexpr size_t chunk_bytes = 1u << 20;
}  // namespace

struct Hasher::Stream {
    std::filesystem::path path;
    OsFile file;
    DigestKind kind = DigestKind::Sha256;
    uint64_t size = 0;
    std::mutex mu;  // held while a chunk is read and hashed, and while the file is restarted
    EVP_MD_CTX* ctx = nullptr;
    std::atomic<uint64_t> written{0};
    std::atomic<uint64_t> hashed{0};
    std::atomic<bool> finishing{false};
    std::atomic<bool> done{false};
    uint64_t woken_at = 0;  // writer side: `written` when the hashing thread was last woken
    std::optional<Result<std::string>> outcome;

    ~Stream() { EVP_MD_CTX_free(ctx); }

    void begin() {
        EVP_DigestInit_ex(ctx, kind == DigestKind::Sha256 ? EVP_sha256() : EVP_sha1(), nullptr);
        if (kind == DigestKind::GitBlobSha1) {
            std::string header = "blob " + std::to_string(size);
            EVP_DigestUpdate(ctx, header.c_str(), header.size() + 1);  // with its NUL
        }
    }
};

Hasher::Hasher(std::function<void()> on_result) : on_result_(std::move(on_result)), buffer_(chunk_bytes) {
    thread_ = std::thread([this] { run(); });
}

Hasher::~Hasher() {
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

Result<std::shared_ptr<Hasher::Stream>> Hasher::open(const std::filesystem::path& file, DigestKind kind, uint64_t size) {
    auto s = std::make_shared<Stream>();
    s->path = file;
    s->kind = kind;
    s->size = size;
    auto opened = OsFile::open(file, OsFile::Access::Read);
    if (auto* e = std::get_if<OsError>(&opened)) return Error{"cannot open " + file.string() + " to verify it: " + e->text};
    s->file = std::move(std::get<OsFile>(opened));
    s->ctx = EVP_MD_CTX_new();
    if (!s->ctx) return Error{"out of memory for a digest of " + file.string()};
    s->begin();
    std::lock_guard lock(mu_);
    streams_.push_back(s);
    return s;
}

void Hasher::advance(Stream& s, uint64_t written) {
    s.written = written;
    if (written - s.woken_at < chunk_bytes) return;
    s.woken_at = written;
    std::lock_guard lock(mu_);
    cv_.notify_one();
}

void Hasher::restart(Stream& s, const std::function<void()>& truncate) {
    std::lock_guard guard(s.mu);
    truncate();
    s.written = 0;
    s.hashed = 0;
    s.woken_at = 0;
    s.finishing = false;
    s.done = false;
    s.outcome.reset();
    s.begin();
}

void Hasher::finish(Stream& s) {
    s.finishing = true;
    std::lock_guard lock(mu_);
    cv_.notify_one();
}

std::optional<Result<std::string>> Hasher::result(Stream& s) {
    std::lock_guard guard(s.mu);
    return s.outcome;
}

void Hasher::close(const std::shared_ptr<Stream>& s) {
    std::lock_guard lock(mu_);
    std::erase(streams_, s);
}

std::shared_ptr<Hasher::Stream> Hasher::next_with_work() {
    for (size_t i = 0; i < streams_.size(); ++i) {
        auto& s = streams_[(next_ + i) % streams_.size()];
        if (!s->done && (s->hashed < s->written || s->finishing)) {
            next_ = (next_ + i + 1) % streams_.size();  // round robin, so one big file starves none
            return s;
        }
    }
    return nullptr;
}

void Hasher::run() {
    std::unique_lock lock(mu_);
    for (;;) {
        std::shared_ptr<Stream> s;
        cv_.wait(lock, [&] { return stop_ || (s = next_with_work()) != nullptr; });
        if (stop_) return;
        lock.unlock();
        if (hash_some(*s)) on_result_();
        lock.lock();
    }
}

bool Hasher::hash_some(Stream& s) {
    std::lock_guard guard(s.mu);
    if (s.done) return false;
    const uint64_t hashed = s.hashed, written = s.written;
    if (hashed < written) {
        size_t n = size_t(std::min<uint64_t>(written - hashed, buffer_.size()));
        const auto read = s.file.read_at(buffer_.data(), n, hashed);
        const size_t got = std::holds_alternative<size_t>(read) ? std::get<size_t>(read) : 0;
        if (got == 0) {
            const auto* e = std::get_if<OsError>(&read);
            const std::string why = e ? e->text : "the file is shorter than was written";
            s.outcome = Error{"cannot read back " + s.path.string() + " at byte " + std::to_string(hashed) + ": " + why};
            s.done = true;
            return true;
        }
        EVP_DigestUpdate(s.ctx, buffer_.data(), got);
        s.hashed = hashed + uint64_t(got);
    }
    if (!s.finishing || s.hashed != s.written) return false;
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int n_digest = 0;
    EVP_DigestFinal_ex(s.ctx, digest, &n_digest);
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned i = 0; i < n_digest; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    s.outcome = std::move(out);
    s.done = true;
    return true;
}

}  // namespace ember::hub

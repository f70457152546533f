#include "tools/kl_base_file.h"

#include <cstring>
#include <filesystem>
#include <system_error>

namespace ember::tools {

namespace {

constexpr char kMagic[8] = {'E', 'M', 'B', 'E', 'R', 'K', 'L', 'B'};
constexpr uint32_t kVersion = 1;
constexpr uint64_t kHeaderBytes = 8 + 4 + 4 + 8 + 4 + 8;
constexpr uint64_t kRowHeadBytes = 8 + 4 + 4 + 4;

// The file is little-endian; so is every machine Ember builds for (x86-64, arm64).
template <class T>
void put(std::ofstream& out, const T& v) {
    out.write(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
T get(std::ifstream& in) {
    T v{};
    in.read(reinterpret_cast<char*>(&v), sizeof v);
    return v;
}

}  // namespace

void VocabHash::add(const std::string& token_text) {
    for (unsigned char c : token_text) h_ = (h_ ^ c) * 0x100000001b3ull;
    h_ = (h_ ^ 0xFFu) * 0x100000001b3ull;
}

BaseFileWriter::BaseFileWriter(std::string path, const BaseHeader& header, std::span<const int32_t> tokens)
    : path_(std::move(path)), n_vocab_(header.n_vocab), out_(path_, std::ios::binary | std::ios::trunc) {
    if (!out_) throw BaseFileError(path_ + ": cannot create the KL divergence base file");
    out_.write(kMagic, sizeof kMagic);
    put(out_, kVersion);
    put(out_, header.n_vocab);
    put(out_, header.vocab_hash);
    put(out_, header.n_ctx);
    put(out_, header.n_tokens);
    out_.write(reinterpret_cast<const char*>(tokens.data()), std::streamsize(tokens.size_bytes()));
    if (!out_) throw BaseFileError(path_ + ": cannot write the KL divergence base file");
}

void BaseFileWriter::write_row(const BaseRow& row) {
    put(out_, row.nll);
    put(out_, row.top);
    put(out_, row.scale);
    put(out_, row.min_log_prob);
    out_.write(reinterpret_cast<const char*>(row.q.data()), std::streamsize(size_t(n_vocab_) * sizeof(uint16_t)));
    if (!out_) throw BaseFileError(path_ + ": cannot write the KL divergence base file (disk full?)");
}

void BaseFileWriter::finish() {
    out_.close();
    if (!out_) throw BaseFileError(path_ + ": cannot write the KL divergence base file (disk full?)");
}

BaseFileReader::BaseFileReader(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
    const std::string what = path_ + ": ";
    if (!in_) throw BaseFileError(what + "cannot read the KL divergence base file");
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path_, ec);
    if (ec) throw BaseFileError(what + "cannot read the KL divergence base file: " + ec.message());
    char magic[8] = {};
    in_.read(magic, sizeof magic);
    if (!in_ || std::memcmp(magic, kMagic, sizeof magic) != 0)
        throw BaseFileError(what + "not a KL divergence base file of ember-perplexity (no EMBERKLB magic)");
    const uint32_t version = get<uint32_t>(in_);
    if (version != kVersion)
        throw BaseFileError(what + "KL divergence base file version " + std::to_string(version) +
                            ", this ember-perplexity reads version " + std::to_string(kVersion));
    header_.n_vocab = get<uint32_t>(in_);
    header_.vocab_hash = get<uint64_t>(in_);
    header_.n_ctx = get<uint32_t>(in_);
    header_.n_tokens = get<uint64_t>(in_);
    if (!in_) throw BaseFileError(what + "truncated: the header is incomplete");
    const BaseHeader& h = header_;
    if (h.n_vocab == 0 || h.n_ctx < 4 || h.n_tokens == 0 || h.n_tokens % h.n_ctx != 0 || h.n_tokens > (1ull << 40))
        throw BaseFileError(what + "corrupt header: n_vocab " + std::to_string(h.n_vocab) + ", n_ctx " +
                            std::to_string(h.n_ctx) + ", n_tokens " + std::to_string(h.n_tokens));
    const uint64_t expected = kHeaderBytes + h.n_tokens * 4 +
                              h.n_chunk() * h.rows_per_chunk() * (kRowHeadBytes + 2ull * h.n_vocab);
    if (size != expected)
        throw BaseFileError(what + "truncated or corrupt: " + std::to_string(size) + " bytes, its header (n_vocab " +
                            std::to_string(h.n_vocab) + ", n_ctx " + std::to_string(h.n_ctx) + ", " +
                            std::to_string(h.n_tokens) + " tokens) implies " + std::to_string(expected));
    tokens_.resize(h.n_tokens);
    in_.read(reinterpret_cast<char*>(tokens_.data()), std::streamsize(tokens_.size() * sizeof(int32_t)));
    for (size_t i = 0; i < tokens_.size(); ++i)
        if (tokens_[i] < 0 || uint32_t(tokens_[i]) >= h.n_vocab)
            throw BaseFileError(what + "corrupt: token " + std::to_string(i) + " is " + std::to_string(tokens_[i]) +
                                ", outside the vocabulary of " + std::to_string(h.n_vocab));
}

void BaseFileReader::read_row(BaseRow& row) {
    row.nll = get<double>(in_);
    row.top = get<int32_t>(in_);
    row.scale = get<float>(in_);
    row.min_log_prob = get<float>(in_);
    row.q.resize(header_.n_vocab);
    in_.read(reinterpret_cast<char*>(row.q.data()), std::streamsize(row.q.size() * sizeof(uint16_t)));
    if (!in_) throw BaseFileError(path_ + ": cannot read the KL divergence base file past its header");
    if (row.top < 0 || uint32_t(row.top) >= header_.n_vocab || !(row.scale >= 0.0f))
        throw BaseFileError(path_ + ": corrupt row: top token " + std::to_string(row.top) + ", scale " +
                            std::to_string(row.scale));
}

}  // namespace ember::tools

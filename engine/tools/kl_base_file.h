#pragma once
// The base file of `ember-perplexity --kl-divergence-base FILE`: what a base run keeps so a later
// run of another model on the same text can be compared with it position by position.
//
// Layout, version 1, little-endian, no padding:
//   char     magic[8]       "EMBERKLB"
//   uint32   version        1
//   uint32   n_vocab        the base model's vocabulary size
//   uint64   vocab_hash     FNV-1a 64 over each token's text followed by a 0xFF byte, in id order:
//                           two models with the same n_vocab but another tokenizer differ here
//   uint32   n_ctx          the chunk length of the run
//   uint64   n_tokens       tokens compared: n_chunk · n_ctx
//   int32    tokens[n_tokens]      the text as tokenized (before each chunk's first token
//                                  became BOS), so a run on other text is refused
//   then for each chunk, for each scored position (n_ctx − 1 − n_ctx/2 of them), a row of
//   20 + 2 · n_vocab bytes:
//   float64  nll            −log p(next token)
//   int32    top            most likely token
//   float32  scale, min_log_prob   log p(i) ≈ min_log_prob + scale · q[i]
//   uint16   q[n_vocab]     (tools/kl_divergence.h says how they are made)
// A file whose size is not exactly what its header implies is refused as truncated or corrupt.

#include <cstdint>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tools/kl_divergence.h"

namespace ember::tools {

// A base file that cannot be written, read or used; the message names the file and the values.
struct BaseFileError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct BaseHeader {
    uint32_t n_vocab = 0;
    uint64_t vocab_hash = 0;
    uint32_t n_ctx = 0;
    uint64_t n_tokens = 0;

    uint64_t n_chunk() const { return n_tokens / n_ctx; }
    uint64_t rows_per_chunk() const { return n_ctx - 1 - n_ctx / 2; }
};

// The vocab_hash of a vocabulary given by its tokens' texts.
class VocabHash {
public:
    void add(const std::string& token_text);
    uint64_t value() const { return h_; }

private:
    uint64_t h_ = 0xcbf29ce484222325ull;
};

class BaseFileWriter {
public:
    // Writes the header and the tokens; throws BaseFileError naming the path.
    BaseFileWriter(std::string path, const BaseHeader& header, std::span<const int32_t> tokens);
    void write_row(const BaseRow& row);
    void finish();  // flushes and closes; throws if anything failed to reach the file

private:
    std::string path_;
    uint32_t n_vocab_;
    std::ofstream out_;
};

class BaseFileReader {
public:
    // Reads and checks the header and the tokens against the file's size; throws BaseFileError.
    explicit BaseFileReader(std::string path);
    const BaseHeader& header() const { return header_; }
    const std::vector<int32_t>& tokens() const { return tokens_; }
    const std::string& path() const { return path_; }
    void read_row(BaseRow& row);

private:
    std::string path_;
    std::ifstream in_;
    BaseHeader header_;
    std::vector<int32_t> tokens_;
};

}  // namespace ember::tools

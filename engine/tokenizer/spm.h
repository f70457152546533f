#pragma once
// SentencePiece encoding (BPE-type model with byte fallback), as the `sentencepiece` library
// does it for Llama's tokenizer.model: identity normalization, spaces become U+2581, one
// U+2581 is prepended to non-empty text, then adjacent pieces are merged highest score
// first (ties: leftmost), and a piece not in the vocabulary becomes its <0xXX> byte tokens.
//
// Differences from the library, on inputs Llama models do not meet: ill-formed UTF-8 is kept
// byte for byte (through byte tokens) instead of being replaced by U+FFFD, and USER_DEFINED
// pieces are merged like normal pieces instead of being matched whole.

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace ember::tokenizer {

class SpmEncoder {
public:
    // `vocab` must outlive the encoder: the lookup table holds views into its pieces.
    explicit SpmEncoder(const Vocab& vocab);

    // Appends the ids of `text` to `out`.
    void encode(std::string_view text, std::vector<int32_t>& out) const;

private:
    struct Symbol;
    struct Bigram;

    int32_t find(std::string_view piece) const;
    bool mergeable(int32_t id) const;
    void emit(std::string_view piece, const std::vector<std::pair<std::string_view, size_t>>& unused_splits,
              std::vector<int32_t>& out) const;

    const Vocab& vocab_;
    std::unordered_map<std::string_view, int32_t> ids_;
    std::array<int32_t, 256> byte_ids_;  // -1 where the vocabulary has no <0xXX> token
    bool byte_fallback_ = false;
};

}  // namespace ember::tokenizer

#pragma once
// GPT-2 byte-level BPE: the text is cut by the vocabulary's pre-tokenizer, each chunk starts as
// one token per byte, and adjacent tokens are merged lowest merge rank first (ties:
// leftmost) until no listed pair is left.
//
// A priority queue stands in for GPT-2's "merge every occurrence of the best pair, then
// rescan"; the two agree whenever a merge's halves come from lower-ranked merges, which is
// how BPE training produces them.

#include <array>
#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace ember::tokenizer {

class BpeEncoder {
public:
    explicit BpeEncoder(const Vocab& vocab);

    // Appends the ids of `text` to `out`.
    void encode(std::string_view text, std::vector<int32_t>& out) const;

    // Id of the token for one byte, -1 if the vocabulary lacks it.
    int32_t byte_token(uint8_t byte) const { return byte_ids_[byte]; }

private:
    struct Merge {
        int32_t rank;
        int32_t result;
    };
    struct Symbol;
    struct Pair;

    static uint64_t key(int32_t left, int32_t right) {
        return (uint64_t(uint32_t(left)) << 32) | uint32_t(right);
    }

    std::unordered_map<uint64_t, Merge> merges_;  // (left id, right id) -> rank and merged id
    std::array<int32_t, 256> byte_ids_;
    int32_t unk_id_ = -1;
    PreTokenizer pre_;
    std::unordered_map<std::string_view, int32_t> whole_chunks_;  // piece -> id, for Llama 3 only
};

}  // namespace ember::tokenizer

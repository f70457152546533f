#pragma once
// The last repeat_last_n accepted tokens, kept so that the set of distinct ids among them
// is available in O(1) per accepted token and without allocation: a ring of ids, a count
// per vocabulary id, and a dense list of the ids whose count is non-zero.

#include <cstdint>
#include <span>
#include <vector>

namespace ember::sampling {

class TokenHistory {
public:
    TokenHistory(int32_t capacity, int32_t n_vocab);

    // Appends a token in [0, n_vocab), evicting the oldest when the ring is full.
    // With capacity 0 nothing is kept.
    void push(int32_t token);
    void clear();

    // Each distinct id in the window once, in no particular order.
    std::span<const int32_t> distinct() const { return {distinct_.data(), n_distinct_}; }
    size_t size() const { return size_; }

private:
    void add(int32_t token);
    void remove(int32_t token);

    std::vector<int32_t> ring_;      // [capacity] oldest at head_
    size_t head_ = 0;
    size_t size_ = 0;
    std::vector<int32_t> count_;     // [n_vocab] occurrences in the ring
    std::vector<int32_t> slot_;      // [n_vocab] index in distinct_ while count_ > 0
    std::vector<int32_t> distinct_;  // [capacity] first n_distinct_ entries are live
    size_t n_distinct_ = 0;
};

}  // namespace ember::sampling

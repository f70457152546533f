#include "sampling/history.h"

namespace ember::sampling {

TokenHistory::TokenHistory(int32_t capacity, int32_t n_vocab)
    : ring_(static_cast<size_t>(capacity > 0 ? capacity : 0)),
      count_(static_cast<size_t>(n_vocab), 0),
      slot_(static_cast<size_t>(n_vocab), 0),
      distinct_(ring_.size()) {}

void TokenHistory::push(int32_t token) {
    if (ring_.empty()) {
        return;
    }
    if (size_ == ring_.size()) {
        remove(ring_[head_]);
        ring_[head_] = token;
        head_ = (head_ + 1) % ring_.size();
    } else {
        ring_[(head_ + size_) % ring_.size()] = token;
        ++size_;
    }
    add(token);
}

void TokenHistory::clear() {
    // Only the live ids have non-zero counts, so this is O(capacity), not O(n_vocab).
    for (size_t i = 0; i < n_distinct_; ++i) {
        count_[static_cast<size_t>(distinct_[i])] = 0;
    }
    n_distinct_ = 0;
    head_ = 0;
    size_ = 0;
}

void TokenHistory::add(int32_t token) {
    const auto t = static_cast<size_t>(token);
    if (count_[t]++ == 0) {
        slot_[t] = static_cast<int32_t>(n_distinct_);
        distinct_[n_distinct_++] = token;
    }
}

void TokenHistory::remove(int32_t token) {
    const auto t = static_cast<size_t>(token);
    if (--count_[t] == 0) {
        // Swap the last live id into the freed slot.
        const auto s = static_cast<size_t>(slot_[t]);
        const int32_t last = distinct_[--n_distinct_];
        distinct_[s] = last;
        slot_[static_cast<size_t>(last)] = static_cast<int32_t>(s);
    }
}

}  // namespace ember::sampling

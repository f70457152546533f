#pragma once
// The F16 key/value cache of one sequence. Storage: per layer, per position, n_embd_gqa values
// (K after RoPE). Bookkeeping is one count: positions [0, n_past) hold valid entries, so
// truncate (regenerate, edit) and clear cost nothing.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember::model {

class KvCache {
public:
    KvCache(int32_t n_layer, int32_t n_ctx, int32_t n_embd_gqa);

    int32_t n_ctx() const { return n_ctx_; }
    int32_t n_past() const { return n_past_; }
    int32_t free_cells() const { return n_ctx_ - n_past_; }

    uint16_t* k(int32_t il, int32_t pos) { return k_.data() + offset(il, pos); }
    uint16_t* v(int32_t il, int32_t pos) { return v_.data() + offset(il, pos); }
    const uint16_t* k(int32_t il, int32_t pos) const { return k_.data() + offset(il, pos); }
    const uint16_t* v(int32_t il, int32_t pos) const { return v_.data() + offset(il, pos); }

    // Marks n more positions valid once the forward pass has written them.
    void commit(int32_t n);
    void truncate(int32_t n_keep);
    void clear() { n_past_ = 0; }
    size_t bytes() const { return (k_.size() + v_.size()) * sizeof(uint16_t); }

private:
    size_t offset(int32_t il, int32_t pos) const {
        return (size_t(il) * size_t(n_ctx_) + size_t(pos)) * size_t(n_embd_gqa_);
    }
    int32_t n_layer_, n_ctx_, n_embd_gqa_;
    int32_t n_past_ = 0;
    std::vector<uint16_t> k_, v_;
};

}  // namespace ember::model

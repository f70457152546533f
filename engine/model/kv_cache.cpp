#include "model/kv_cache.h"

#include <algorithm>
#include <string>

#include "common/error.h"

namespace ember::model {

KvCache::KvCache(int32_t n_layer, int32_t n_ctx, int32_t n_embd_gqa)
    : n_layer_(n_layer), n_ctx_(n_ctx), n_embd_gqa_(n_embd_gqa),
      k_(size_t(n_layer) * size_t(n_ctx) * size_t(n_embd_gqa)), v_(k_.size()) {}

void KvCache::commit(int32_t n) {
    if (n < 0 || n > free_cells())
        fail("KV cache: cannot add " + std::to_string(n) + " tokens, " + std::to_string(free_cells()) + " of " +
             std::to_string(n_ctx_) + " cells are free");
    n_past_ += n;
}

void KvCache::truncate(int32_t n_keep) { n_past_ = std::clamp(n_keep, 0, n_past_); }

}  // namespace ember::model

#pragma once
// CPU steps of a layer's attention sub-layer that both the model's CPU path and the sim device
// take, so the two stay the same computation.

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "tensor/norms.h"

namespace ember::tensor {

// A sub-layer's input normalization: F32 weights of n_embd values, in the model's host memory.
struct Norm {
    const float* w = nullptr;
    const float* b = nullptr;  // LayerNorm's bias; null: RMSNorm
    float eps = 0.0f;
};

// out = LayerNorm (n.b set) or RMSNorm of n_tokens rows of n_embd values.
inline void normalize(const Norm& n, const float* x, float* out, int64_t n_embd, int32_t n_tokens) {
    if (n.b)
        layer_norm(x, n.w, n.b, out, n_embd, n_tokens, n.eps);
    else
        rms_norm(x, n.w, out, n_embd, n_tokens, n.eps);
}

// A fused QKV product's rows ([n_tokens][n_embd + 2 n_gqa]) into q, k and v.
inline void split_qkv(const float* fused, int32_t n_tokens, size_t n_embd, size_t n_gqa, float* q, float* k, float* v) {
    const size_t n_qkv = n_embd + 2 * n_gqa;
    for (size_t t = 0; t < size_t(n_tokens); ++t) {
        const float* row = fused + t * n_qkv;
        std::copy(row, row + n_embd, q + t * n_embd);
        std::copy(row + n_embd, row + n_embd + n_gqa, k + t * n_gqa);
        std::copy(row + n_embd + n_gqa, row + n_qkv, v + t * n_gqa);
    }
}

}  // namespace ember::tensor

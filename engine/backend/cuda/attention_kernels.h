#pragma once
// The attention kernels over a device-resident F16 KV cache: storing a batch's K and V rows,
// and one token's causal attention for every head. Every pointer is device memory; every
// launch is queued on `stream`.

#include <cstddef>
#include <cstdint>

#include "backend/cuda/gpu_runtime.h"

namespace ember::backend::gpu {

// dst[t * stride + i] = F16(src[t * n + i]) for t < n_tokens, i < n: K or V rows into the cache.
void launch_store_half(const float* src, int32_t n_tokens, int32_t n, uint16_t* dst, size_t stride, gpuStream_t stream);

struct AttentionArgs {
    const float* q;      // [n_head * head_dim] of one token
    const uint16_t* k;   // the layer's keys: position p, KV head g at k + p * stride + g * head_dim
    const uint16_t* v;   // the layer's values, likewise
    size_t stride;       // n_head_kv * head_dim
    int32_t n_keys;      // positions [0, n_keys) are attended
    int32_t n_head, group, head_dim;  // group = n_head / n_head_kv
    float scale;
    float* scores;       // scratch: n_head * n_keys floats
    float* out;          // [n_head * head_dim]
};

// One block per head: scores, their maximum, the F16 softmax weights and their sum (a fixed
// reduction tree: the same bits every run), then each output element summed over positions in
// order. head_dim must not exceed kMaxHeadDim.
void launch_attention(const AttentionArgs& a, gpuStream_t stream);

}  // namespace ember::backend::gpu

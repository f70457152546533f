#pragma once
// The arithmetic of the attention kernel, one step at a time, with tensor::attend_head's
// roundings (the query and the weights meet the F16 cache as F16, exp goes through F16). It
// compiles for the GPU (inside attention_kernels.cu) and for the CPU, where
// tests/engine/tst_gpu_kernel_math runs it in the kernel's order against attend_head.

#include <cmath>
#include <cstdint>

#include "backend/cuda/ffn_math.h"

namespace ember::backend::gpu {

constexpr int kAttentionThreads = 128;  // threads per (token, head) block
constexpr int kMaxHeadDim = 256;        // the query's F16 copy lives in shared memory

EMBER_HD inline uint16_t float_to_half(float x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return __half_as_ushort(__float2half_rn(x));
#else
    return tensor::f32_to_fp16(x);
#endif
}

EMBER_HD inline float round_to_half(float x) { return half_to_float(float_to_half(x)); }

// scale · (F16 key · F16 query), summed in element order.
EMBER_HD inline float attention_score(const uint16_t* k, const uint16_t* q_half, int32_t head_dim, float scale) {
    float acc = 0.0f;
    for (int32_t d = 0; d < head_dim; ++d) acc += half_to_float(k[d]) * half_to_float(q_half[d]);
    return acc * scale;
}

// A score's unnormalized softmax weight: exp of the F16-rounded difference, rounded to F16.
EMBER_HD inline float softmax_weight(float score, float max) {
    return round_to_half(expf(round_to_half(score - max)));
}

}  // namespace ember::backend::gpu

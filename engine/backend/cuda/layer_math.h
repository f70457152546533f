#pragma once
// The arithmetic of the layer kernels (activation preparation, RoPE, the norms' last step), with
// the CPU's roundings. It compiles for the GPU (inside layer_kernels.cu) and for the CPU, where
// the host stand-in of the kernels uses it.

#include <cmath>
#include <cstdint>

#include "backend/cuda/attention_math.h"

namespace ember::backend::gpu {

constexpr int kNormThreads = 256;  // threads per token row of a norm

// a · b and a + b, each rounded on its own as the CPU rounds them: the GPU compilers would
// otherwise fuse a product and a sum into one FMA, and RoPE and LayerNorm would drift from the
// CPU's bits.
EMBER_HD inline float mul(float a, float b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
EMBER_HD inline float add(float a, float b) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

// One Q8_0 block (34 bytes: F16 scale, 32 int8) of 32 values, as tensor::quantize_row_q8_0_ref
// rounds it: d = amax / 127, q = round(v / d) half away from zero.
EMBER_HD inline void quantize_q8_0_block(const float* v, uint8_t* out) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j) amax = fmaxf(amax, fabsf(v[j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    // One 16-bit store: stored as two bytes, the scale lost its low byte on an H200 (sm_90 code
    // from CUDA 13.0), every product with a prepared activation coming out about 20 % small.
    store_u16(out, float_to_half(d));
    for (int j = 0; j < 32; ++j) out[2 + j] = uint8_t(int8_t(int(roundf(v[j] * id))));
}

// Pair j of a head: its two elements' offsets, adjacent (2j, 2j+1) or NeoX (j, j + head_dim/2).
EMBER_HD inline int32_t rope_first(int32_t j, bool neox) { return neox ? j : 2 * j; }
EMBER_HD inline int32_t rope_second(int32_t j, int32_t head_dim, bool neox) { return neox ? j + head_dim / 2 : 2 * j + 1; }

// Rotates one pair by angle j of `angles` (cos values, then sin values).
EMBER_HD inline void rope_pair(float* a, float* b, const float* angles, int32_t j, int32_t head_dim) {
    const float x0 = *a, x1 = *b, c = angles[j], s = angles[head_dim / 2 + j];
    *a = add(mul(x0, c), -mul(x1, s));
    *b = add(mul(x0, s), mul(x1, c));
}

// Element i of a norm's output: (x - mean) · scale · w (+ b for LayerNorm).
EMBER_HD inline float norm_value(float x, float mean, float scale, float w, const float* b, int64_t i) {
    const float y = mul(mul(add(x, -mean), scale), w);
    return b ? add(y, b[i]) : y;
}

// A norm's scale from the sum of squares over n values.
EMBER_HD inline float norm_scale(double sum_squares, int64_t n, float eps) {
    return 1.0f / sqrtf(float(sum_squares / double(n)) + eps);
}

}  // namespace ember::backend::gpu

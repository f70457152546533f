#pragma once
// The arithmetic of the hot-FFN kernels, one lane's share of a row at a time. It compiles for
// the GPU (inside ffn_kernels.cu) and for the CPU, so tests/engine/tst_gpu_kernel_math checks
// the block layouts, nibble order and lane striding against the CPU kernels on any machine.
//
// Rows of Q4_0 (18-byte blocks) and Q8_0 (34-byte blocks) are only 2-byte aligned, so scales
// are read as 16-bit words and quants as bytes; F16 rows of even length are read as 32-bit
// pairs.

#include <cstdint>

#include "tensor/fp16.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define EMBER_HD __host__ __device__
#else
#define EMBER_HD
#endif

namespace ember::backend::gpu {

constexpr int kLanes = 32;  // lanes that share one row's dot product

EMBER_HD inline float half_to_float(uint16_t h) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return __half2float(__ushort_as_half(h));  // kernel_prelude.h brings the fp16 intrinsics
#else
    return tensor::fp16_to_f32(h);
#endif
}

EMBER_HD inline uint16_t load_u16(const uint8_t* p) { return *reinterpret_cast<const uint16_t*>(p); }
EMBER_HD inline void store_u16(uint8_t* p, uint16_t v) { *reinterpret_cast<uint16_t*>(p) = v; }

// Lane `lane`'s part of row · x for n values; the row's result is the sum over the kLanes lanes.
EMBER_HD inline float dot_f16_lane(const uint8_t* w, const uint8_t* x, int64_t n, int lane) {
    float acc = 0.0f;
    if (n % 2 == 0) {
        const auto* w2 = reinterpret_cast<const uint32_t*>(w);
        const auto* x2 = reinterpret_cast<const uint32_t*>(x);
        for (int64_t i = lane; i < n / 2; i += kLanes) {
            const uint32_t a = w2[i], b = x2[i];
            acc += half_to_float(uint16_t(a)) * half_to_float(uint16_t(b)) +
                   half_to_float(uint16_t(a >> 16)) * half_to_float(uint16_t(b >> 16));
        }
    } else {
        const auto* w1 = reinterpret_cast<const uint16_t*>(w);
        const auto* x1 = reinterpret_cast<const uint16_t*>(x);
        for (int64_t i = lane; i < n; i += kLanes) acc += half_to_float(w1[i]) * half_to_float(x1[i]);
    }
    return acc;
}

// Q4_0 weights × the Q8_0 activation: lane takes blocks lane, lane + 32, …
EMBER_HD inline float dot_q4_0_lane(const uint8_t* w, const uint8_t* x, int64_t n, int lane) {
    float acc = 0.0f;
    for (int64_t b = lane; b < n / 32; b += kLanes) {
        const uint8_t* wb = w + b * 18;
        const uint8_t* xb = x + b * 34;
        const auto* xq = reinterpret_cast<const int8_t*>(xb + 2);
        int sum = 0;
        for (int k = 0; k < 16; ++k) {
            const int q = wb[2 + k];
            sum += ((q & 15) - 8) * xq[k] + ((q >> 4) - 8) * xq[k + 16];
        }
        acc += half_to_float(load_u16(wb)) * half_to_float(load_u16(xb)) * float(sum);
    }
    return acc;
}

EMBER_HD inline float dot_q8_0_lane(const uint8_t* w, const uint8_t* x, int64_t n, int lane) {
    float acc = 0.0f;
    for (int64_t b = lane; b < n / 32; b += kLanes) {
        const uint8_t* wb = w + b * 34;
        const uint8_t* xb = x + b * 34;
        const auto* wq = reinterpret_cast<const int8_t*>(wb + 2);
        const auto* xq = reinterpret_cast<const int8_t*>(xb + 2);
        int sum = 0;
        for (int k = 0; k < 32; ++k) sum += wq[k] * xq[k];
        acc += half_to_float(load_u16(wb)) * half_to_float(load_u16(xb)) * float(sum);
    }
    return acc;
}

// Element c of a row, for the down-projection's column-per-thread sum.
EMBER_HD inline float value_f16(const uint8_t* w, int64_t c) { return half_to_float(reinterpret_cast<const uint16_t*>(w)[c]); }

EMBER_HD inline float value_q4_0(const uint8_t* w, int64_t c) {
    const uint8_t* b = w + (c / 32) * 18;
    const int m = int(c % 32);
    const int q = b[2 + (m & 15)];
    return float((m < 16 ? q & 15 : q >> 4) - 8) * half_to_float(load_u16(b));
}

EMBER_HD inline float value_q8_0(const uint8_t* w, int64_t c) {
    const uint8_t* b = w + (c / 32) * 34;
    return float(reinterpret_cast<const int8_t*>(b + 2)[c % 32]) * half_to_float(load_u16(b));
}

// Rows of the down-projection are summed in fixed chunks of this many, each chunk in the order
// given, then the chunks in order: the same inputs always give the same bits.
constexpr int32_t kDownChunk = 64;
constexpr int32_t down_chunks(int32_t n) { return (n + kDownChunk - 1) / kDownChunk; }

}  // namespace ember::backend::gpu

#include "tensor/random_blocks.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/error.h"
#include "tensor/fp16.h"

namespace ember::tensor {
namespace {

// Where a block's fp16 scale (and minimum) sit, and the scale that gives values of about unit
// standard deviation with uniformly random quants and sub-block scales. The minimum, as a
// multiple of the scale, cancels the unsigned quants' mean.
struct ScaleFields {
    int d_offset;
    int m_offset;      // -1: no minimum
    float unit_d;
    float m_per_d;     // the stored minimum is m_per_d · d (GGUF adds it for Q4_1/Q5_1, subtracts it for K-quants)
};

ScaleFields scale_fields(DType t) {
    switch (t) {
        case DType::Q4_0: return {0, -1, 1.0f / 4.0f, 0};
        case DType::Q8_0: return {0, -1, 1.0f / 64.0f, 0};
        case DType::Q4_1: return {0, 2, 1.0f / 4.6f, -7.5f};
        case DType::Q5_0: return {0, -1, 1.0f / 9.2f, 0};
        case DType::Q5_1: return {0, 2, 1.0f / 9.2f, -15.5f};
        case DType::IQ4_NL: return {0, -1, 1.0f / 65.0f, 0};
        case DType::Q2_K: return {80, 82, 1.0f / 8.0f, 1.5f};
        case DType::Q3_K: return {108, -1, 1.0f / 40.0f, 0};
        case DType::Q4_K: return {0, 2, 1.0f / 145.0f, 7.5f};
        case DType::Q5_K: return {0, 2, 1.0f / 290.0f, 15.5f};
        case DType::Q6_K: return {208, -1, 1.0f / 1370.0f, 0};
        case DType::IQ4_XS: return {0, -1, 1.0f / 1200.0f, 0};
        default: fail(std::string("no random blocks for ") + dtype_name(t));
    }
}

void put_half(uint8_t* p, float v) {
    const uint16_t h = f32_to_fp16(v);
    std::memcpy(p, &h, 2);
}

}  // namespace

void random_row(DType t, int64_t n, float sd, std::mt19937_64& rng, uint8_t* out) {
    if (t == DType::F32 || t == DType::F16) {
        std::normal_distribution<float> dist(0.0f, sd);
        for (int64_t i = 0; i < n; ++i) {
            const float v = dist(rng);
            if (t == DType::F32) std::memcpy(out + 4 * i, &v, 4);
            else put_half(out + 2 * i, v);
        }
        return;
    }
    const size_t bytes = row_bytes(t, n);
    for (size_t i = 0; i < bytes; i += 8) {
        const uint64_t bits = rng();
        std::memcpy(out + i, &bits, std::min<size_t>(8, bytes - i));
    }
    const ScaleFields f = scale_fields(t);
    const float d = sd * f.unit_d;
    const size_t block = block_bytes(t);
    for (size_t b = 0; b < bytes; b += block) {
        put_half(out + b + size_t(f.d_offset), d);
        if (f.m_offset >= 0) put_half(out + b + size_t(f.m_offset), f.m_per_d * d);
    }
}

}  // namespace ember::tensor

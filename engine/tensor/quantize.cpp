#include "tensor/unfused_arithmetic.h"
#include "tensor/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include <string>

#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace ember::tensor {
namespace {

// The first element of largest magnitude, its sign kept: the symmetric quantizers' reference.
float largest_magnitude(const float* v, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (std::fabs(v[j]) > amax) {
            amax = std::fabs(v[j]);
            max = v[j];
        }
    }
    return max;
}

// Q4_1 and Q5_1: the block's range split into 15 or 31 steps from its minimum.
template <typename Block, int kMaxQ>
void quantize_row_min_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<Block*>(out);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float* v = x + i * kQK;
        float min = v[0], max = v[0];
        for (int j = 1; j < kQK; ++j) {
            min = std::min(min, v[j]);
            max = std::max(max, v[j]);
        }
        const float d = (max - min) / float(kMaxQ);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        y[i].m = f32_to_fp16(min);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = std::min(kMaxQ, int((v[j] - min) * id + 0.5f));
            const int hi = std::min(kMaxQ, int((v[j + kQK / 2] - min) * id + 0.5f));
            y[i].qs[j] = uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
            qh |= uint32_t(lo >> 4) << j | uint32_t(hi >> 4) << (j + kQK / 2);
        }
        if constexpr (kMaxQ == 31) std::memcpy(y[i].qh, &qh, 4);
    }
}

}  // namespace

void quantize_row_q4_0_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ4_0*>(out);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float* v = x + i * kQK;
        const float max = largest_magnitude(v, kQK);
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        for (int j = 0; j < kQK / 2; ++j) {
            // One rounding (fused multiply-add), as PowerInfer's quantize binary is compiled:
            // this reproduces its Q4_0 files byte for byte (upstream's build rounds twice).
            const uint8_t lo = uint8_t(std::min(15, int(std::fma(v[j], id, 8.5f))));
            const uint8_t hi = uint8_t(std::min(15, int(std::fma(v[j + kQK / 2], id, 8.5f))));
            y[i].qs[j] = uint8_t(lo | (hi << 4));
        }
    }
}

void quantize_row_q8_0_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(out);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float* v = x + i * kQK;
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(v[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        for (int j = 0; j < kQK; ++j) y[i].qs[j] = int8_t(std::lround(v[j] * id));
    }
}

void quantize_row_q5_0_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ5_0*>(out);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float* v = x + i * kQK;
        const float max = largest_magnitude(v, kQK);
        const float d = max / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = std::min(31, int(v[j] * id + 16.5f));
            const int hi = std::min(31, int(v[j + kQK / 2] * id + 16.5f));
            y[i].qs[j] = uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
            qh |= uint32_t(lo >> 4) << j | uint32_t(hi >> 4) << (j + kQK / 2);
        }
        std::memcpy(y[i].qh, &qh, 4);
    }
}

void quantize_row_q8_k_ref(const float* x, void* out, int64_t n, Q8KScale scale) {
    auto* y = static_cast<BlockQ8_K*>(out);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float* v = x + i * kQK_K;
        const float max = largest_magnitude(v, kQK_K);
        if (max == 0.0f) {
            std::memset(&y[i], 0, sizeof(BlockQ8_K));
            continue;
        }
        const float iscale = (scale == Q8KScale::Upstream ? -127.0f : -128.0f) / max;
        for (int j = 0; j < kQK_K; ++j)
            y[i].qs[j] = int8_t(std::min(127, int(std::nearbyint(iscale * v[j]))));
        for (int g = 0; g < kQK_K / 16; ++g) {
            int sum = 0;
            for (int j = 0; j < 16; ++j) sum += y[i].qs[g * 16 + j];
            y[i].bsums[g] = int16_t(sum);
        }
        y[i].d = 1.0f / iscale;
    }
}

void quantize_row(DType t, const float* src, void* dst, int64_t n) {
    switch (t) {
        case DType::F32: std::memcpy(dst, src, size_t(n) * 4); return;
        case DType::F16: {
            auto* d = static_cast<uint16_t*>(dst);
            for (int64_t i = 0; i < n; ++i) d[i] = f32_to_fp16(src[i]);
            return;
        }
        case DType::BF16: {
            auto* d = static_cast<uint16_t*>(dst);
            for (int64_t i = 0; i < n; ++i) d[i] = f32_to_bf16(src[i]);
            return;
        }
        case DType::Q4_0: quantize_row_q4_0_ref(src, dst, n); return;
        case DType::Q8_0: quantize_row_q8_0_ref(src, dst, n); return;
        case DType::Q4_1: quantize_row_min_ref<BlockQ4_1, 15>(src, dst, n); return;
        case DType::Q5_0: quantize_row_q5_0_ref(src, dst, n); return;
        case DType::Q5_1: quantize_row_min_ref<BlockQ5_1, 31>(src, dst, n); return;
        case DType::Q4_K: quantize_row_q4_k_ref(src, dst, n); return;
        case DType::Q5_K: quantize_row_q5_k_ref(src, dst, n); return;
        case DType::Q6_K: quantize_row_q6_k_ref(src, dst, n); return;
        case DType::Q8_K: quantize_row_q8_k_ref(src, dst, n); return;
        case DType::Q4_0_X16: fail("Q4_0_X16 rows are re-laid from Q4_0 at load, not quantized to");
        case DType::Q4_0_R8: case DType::Q8_0_R8: case DType::Q4_K_R8: case DType::Q5_K_R8: case DType::Q6_K_R8: fail("grouped rows are re-laid at load, not quantized to");
        default: fail(std::string("quantizing to ") + dtype_name(t) + " is not supported (it is read, not written)");
    }
}

}  // namespace ember::tensor

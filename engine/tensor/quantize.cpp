#include "tensor/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/q4_0_x16.h"
#include "tensor/quant_blocks.h"

namespace ember::tensor {
namespace {

void dequantize_q4_0(const BlockQ4_0* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_f32(b[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[i * kQK + j] = float((b[i].qs[j] & 0x0F) - 8) * d;
            y[i * kQK + j + kQK / 2] = float((b[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantize_q8_0(const BlockQ8_0* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_f32(b[i].d);
        for (int j = 0; j < kQK; ++j) y[i * kQK + j] = float(b[i].qs[j]) * d;
    }
}

void dequantize_q6_k(const BlockQ6_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = fp16_to_f32(b[i].d);
        const uint8_t* ql = b[i].ql;
        const uint8_t* qh = b[i].qh;
        const int8_t* sc = b[i].scales;
        float* out = y + i * kQK_K;
        for (int half = 0; half < 2; ++half) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = int((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int q2 = int((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                out[l] = d * float(sc[is + 0]) * float(q1);
                out[l + 32] = d * float(sc[is + 2]) * float(q2);
                out[l + 64] = d * float(sc[is + 4]) * float(q3);
                out[l + 96] = d * float(sc[is + 6]) * float(q4);
            }
            out += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

void dequantize_q8_k(const BlockQ8_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK_K; ++i)
        for (int j = 0; j < kQK_K; ++j) y[i * kQK_K + j] = b[i].d * float(b[i].qs[j]);
}

}  // namespace

void quantize_row_q4_0_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ4_0*>(out);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float* v = x + i * kQK;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQK; ++j) {
            if (std::fabs(v[j]) > amax) {
                amax = std::fabs(v[j]);
                max = v[j];
            }
        }
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32_to_fp16(d);
        for (int j = 0; j < kQK / 2; ++j) {
            // One rounding (fused multiply-add), as llama.cpp's quantize binary is compiled:
            // this reproduces its Q4_0 files byte for byte.
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

void quantize_row_q8_k_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ8_K*>(out);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float* v = x + i * kQK_K;
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQK_K; ++j) {
            if (std::fabs(v[j]) > amax) {
                amax = std::fabs(v[j]);
                max = v[j];
            }
        }
        if (amax == 0.0f) {
            std::memset(&y[i], 0, sizeof(BlockQ8_K));
            continue;
        }
        const float iscale = -128.0f / max;
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

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
    switch (t) {
        case DType::F32: std::memcpy(dst, src, size_t(n) * 4); return;
        case DType::F16: {
            auto* s = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_f32(s[i]);
            return;
        }
        case DType::BF16: {
            auto* s = static_cast<const uint16_t*>(src);
            for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(s[i]);
            return;
        }
        case DType::Q4_0: dequantize_q4_0(static_cast<const BlockQ4_0*>(src), dst, n); return;
        case DType::Q4_0_X16: {
            std::vector<BlockQ4_0> stored(size_t(n / kQK));
            q4_0_row_from_x16(static_cast<const uint8_t*>(src), n, reinterpret_cast<uint8_t*>(stored.data()));
            dequantize_q4_0(stored.data(), dst, n);
            return;
        }
        case DType::Q8_0: dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, n); return;
        case DType::Q6_K: dequantize_q6_k(static_cast<const BlockQ6_K*>(src), dst, n); return;
        case DType::Q8_K: dequantize_q8_k(static_cast<const BlockQ8_K*>(src), dst, n); return;
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
        case DType::Q8_K: quantize_row_q8_k_ref(src, dst, n); return;
        case DType::Q6_K: fail("quantizing to Q6_K is not supported (Q6_K weights are read, not written)");
        case DType::Q4_0_X16: fail("Q4_0_X16 rows are re-laid from Q4_0 at load, not quantized to");
    }
}

}  // namespace ember::tensor

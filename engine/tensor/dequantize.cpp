#include <cstring>
#include <vector>

#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/q4_0_x16.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

// Block layouts as GGUF defines them (docs/FORMATS.md §5); every element is d·q (+ m) with the
// block's scales, computed in float as llama.cpp's reference dequantizers do.
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


void dequantize_q4_1(const BlockQ4_1* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
        for (int j = 0; j < kQK / 2; ++j) {
            y[i * kQK + j] = float(b[i].qs[j] & 0x0F) * d + m;
            y[i * kQK + j + kQK / 2] = float(b[i].qs[j] >> 4) * d + m;
        }
    }
}

// Element j's quant with its fifth bit from qh: 0..31.
template <typename Block>
int q5_quant(const Block& b, int j) {
    uint32_t qh;
    std::memcpy(&qh, b.qh, 4);
    const int low = j < kQK / 2 ? (b.qs[j] & 0x0F) : (b.qs[j - kQK / 2] >> 4);
    return low | int(((qh >> j) & 1) << 4);
}

void dequantize_q5_0(const BlockQ5_0* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_f32(b[i].d);
        for (int j = 0; j < kQK; ++j) y[i * kQK + j] = float(q5_quant(b[i], j) - 16) * d;
    }
}

void dequantize_q5_1(const BlockQ5_1* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_f32(b[i].d), m = fp16_to_f32(b[i].m);
        for (int j = 0; j < kQK; ++j) y[i * kQK + j] = float(q5_quant(b[i], j)) * d + m;
    }
}

void dequantize_iq4_nl(const BlockIQ4_NL* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = fp16_to_f32(b[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[i * kQK + j] = d * float(kIq4Levels[b[i].qs[j] & 0x0F]);
            y[i * kQK + j + kQK / 2] = d * float(kIq4Levels[b[i].qs[j] >> 4]);
        }
    }
}

void dequantize_q2_k(const BlockQ2_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
        float* out = y + i * kQK_K;
        // Element e of the super-block: byte e % 32 of its 128-element half, bits 2·((e % 128) / 32).
        for (int e = 0; e < kQK_K; ++e) {
            const int half = e / 128, shift = 2 * ((e % 128) / 32);
            const int q = (b[i].qs[half * 32 + e % 32] >> shift) & 3;
            const uint8_t sc = b[i].scales[e / 16];
            out[e] = d * float(sc & 0xF) * float(q) - dmin * float(sc >> 4);
        }
    }
}

void dequantize_q3_k(const BlockQ3_K* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = fp16_to_f32(b[i].d);
        int8_t scales[16];
        q3_k_scales(b[i].scales, scales);
        float* out = y + i * kQK_K;
        for (int e = 0; e < kQK_K; ++e) {
            const int half = e / 128, shift = 2 * ((e % 128) / 32);
            const int low = (b[i].qs[half * 32 + e % 32] >> shift) & 3;
            // The high bit of element e: bit e / 32 of hmask[e % 32]; a clear bit subtracts 4.
            const bool high = (b[i].hmask[e % 32] >> (e / 32)) & 1;
            out[e] = d * float(scales[e / 16]) * float(low - (high ? 0 : 4));
        }
    }
}

// Q4_K and Q5_K: value = d·scale·q − dmin·min per sub-block of 32.
template <typename Block>
void dequantize_k_with_mins(const Block* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
        float* out = y + i * kQK_K;
        for (int j = 0; j < 8; ++j) {
            int sc, m;
            k_scale_min(j, b[i].scales, sc, m);
            const float d1 = d * float(sc), m1 = dmin * float(m);
            for (int l = 0; l < 32; ++l) out[32 * j + l] = d1 * float(k_quant(b[i], j, l)) - m1;
        }
    }
}

void dequantize_iq4_xs(const BlockIQ4_XS* b, float* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = fp16_to_f32(b[i].d);
        float* out = y + i * kQK_K;
        for (int j = 0; j < 8; ++j) {
            const int ls = ((b[i].scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((b[i].scales_h >> (2 * j)) & 3) << 4);
            const float dl = d * float(ls - 32);
            const uint8_t* q = b[i].qs + 16 * j;
            for (int l = 0; l < 16; ++l) {
                out[32 * j + l] = dl * float(kIq4Levels[q[l] & 0xF]);
                out[32 * j + l + 16] = dl * float(kIq4Levels[q[l] >> 4]);
            }
        }
    }
}

}  // namespace

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
        case DType::Q4_1: dequantize_q4_1(static_cast<const BlockQ4_1*>(src), dst, n); return;
        case DType::Q5_0: dequantize_q5_0(static_cast<const BlockQ5_0*>(src), dst, n); return;
        case DType::Q5_1: dequantize_q5_1(static_cast<const BlockQ5_1*>(src), dst, n); return;
        case DType::Q8_0: dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, n); return;
        case DType::IQ4_NL: dequantize_iq4_nl(static_cast<const BlockIQ4_NL*>(src), dst, n); return;
        case DType::Q2_K: dequantize_q2_k(static_cast<const BlockQ2_K*>(src), dst, n); return;
        case DType::Q3_K: dequantize_q3_k(static_cast<const BlockQ3_K*>(src), dst, n); return;
        case DType::Q4_K: dequantize_k_with_mins(static_cast<const BlockQ4_K*>(src), dst, n); return;
        case DType::Q5_K: dequantize_k_with_mins(static_cast<const BlockQ5_K*>(src), dst, n); return;
        case DType::Q6_K: dequantize_q6_k(static_cast<const BlockQ6_K*>(src), dst, n); return;
        case DType::Q8_K: dequantize_q8_k(static_cast<const BlockQ8_K*>(src), dst, n); return;
        case DType::IQ4_XS: dequantize_iq4_xs(static_cast<const BlockIQ4_XS*>(src), dst, n); return;
        case DType::Q4_0_R8: case DType::Q8_0_R8: case DType::Q4_K_R8: case DType::Q5_K_R8: case DType::Q6_K_R8:
            fail(std::string("a ") + dtype_name(t) + " row is not contiguous: take it with row_as_stored first");
    }
}

}  // namespace ember::tensor

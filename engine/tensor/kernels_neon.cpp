// NEON kernels for 64-bit ARM (an Apple Silicon Mac, a Linux ARM board), where NEON is part of
// the base instruction set: a dot product for every weight type Ember reads, and the row axpys
// PowerInfer's files need (F16, Q4_0, Q8_0). Integer block sums are exact, as the scalar twins';
// only the order of the float sums differs, and the row axpys are bit for bit the scalar ones (one
// fused multiply-add per element). Compiles to nothing elsewhere.
#if defined(__aarch64__) && defined(__ARM_NEON)

#include <arm_neon.h>

#include <cmath>
#include <cstring>
#include <type_traits>

#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/quant_blocks.h"

namespace ember::tensor {
namespace {

// Σ a·b over 16 int8 pairs, added into four int32 lanes: products widened to 16 bits, pairs of
// them to 32, so no sum can overflow.
inline int32x4_t add_dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_s8(vget_high_s8(a), vget_high_s8(b)));
}

float dot_q4_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ4_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    const uint8x16_t low = vdupq_n_u8(0x0F);
    const int8x16_t eight = vdupq_n_s8(8);
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const uint8x16_t packed = vld1q_u8(w[i].qs);
        const int8x16_t lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(packed, low)), eight);
        const int8x16_t hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(packed, 4)), eight);
        int32x4_t sum = add_dot16(vdupq_n_s32(0), lo, vld1q_s8(x[i].qs));
        sum = add_dot16(sum, hi, vld1q_s8(x[i].qs + 16));
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(sum), fp16_to_f32(w[i].d) * fp16_to_f32(x[i].d));
    }
    return vaddvq_f32(acc);
}

float dot_q8_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ8_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    float32x4_t acc = vdupq_n_f32(0.0f);
    for (int64_t i = 0; i < n / kQK; ++i) {
        int32x4_t sum = add_dot16(vdupq_n_s32(0), vld1q_s8(w[i].qs), vld1q_s8(x[i].qs));
        sum = add_dot16(sum, vld1q_s8(w[i].qs + 16), vld1q_s8(x[i].qs + 16));
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(sum), fp16_to_f32(w[i].d) * fp16_to_f32(x[i].d));
    }
    return vaddvq_f32(acc);
}

// Σ a·b over 32 pairs as one integer.
inline int32_t dot32(int8x16_t a0, int8x16_t a1, const int8_t* b) {
    return vaddvq_s32(add_dot16(add_dot16(vdupq_n_s32(0), a0, vld1q_s8(b)), a1, vld1q_s8(b + 16)));
}

// Q4_K and Q5_K against Q8_K: sub-block j's scale weights Σ q·x, its minimum the activation's
// group sums; Q5_K's quants take their fifth bit from qh (bit j for sub-block j).
template <typename Block>
float dot_k_with_mins(int64_t n, const void* wv, const void* xv) {
    constexpr bool kFifth = std::is_same_v<Block, BlockQ5_K>;
    auto* w = static_cast<const Block*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const uint8x16_t low = vdupq_n_u8(0x0F), one = vdupq_n_u8(1);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        uint8_t sm[16];
        k_scales_and_mins(w[i].scales, sm);
        uint8x16_t h0 = vdupq_n_u8(0), h1 = vdupq_n_u8(0);
        if constexpr (kFifth) {
            h0 = vld1q_u8(w[i].qh);
            h1 = vld1q_u8(w[i].qh + 16);
        }
        // Bit j of each qh byte as 0x10, or nothing for Q4_K.
        const auto fifth = [&](uint8x16_t h, int j) {
            if constexpr (!kFifth) return vdupq_n_u8(0);
            return vshlq_n_u8(vandq_u8(vshlq_u8(h, vdupq_n_s8(int8_t(-j))), one), 4);
        };
        int32_t isum = 0, msum = 0;
        for (int p = 0; p < 4; ++p) {
            const uint8x16_t q0 = vld1q_u8(w[i].qs + 32 * p), q1 = vld1q_u8(w[i].qs + 32 * p + 16);
            const int8_t* xq = x[i].qs + 64 * p;
            isum += sm[2 * p] * dot32(vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q0, low), fifth(h0, 2 * p))),
                                      vreinterpretq_s8_u8(vorrq_u8(vandq_u8(q1, low), fifth(h1, 2 * p))), xq);
            isum += sm[2 * p + 1] * dot32(vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q0, 4), fifth(h0, 2 * p + 1))),
                                          vreinterpretq_s8_u8(vorrq_u8(vshrq_n_u8(q1, 4), fifth(h1, 2 * p + 1))), xq + 32);
        }
        for (int j = 0; j < 8; ++j) msum += sm[8 + j] * (x[i].bsums[2 * j] + x[i].bsums[2 * j + 1]);
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
        sum -= fp16_to_f32(w[i].dmin) * x[i].d * float(msum);
    }
    return sum;
}

// Q6_K against Q8_K: the unsigned 6-bit quants against the activation, less 32 times the scaled
// group sums.
float dot_q6_k_q8_k(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ6_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const uint8x16_t low = vdupq_n_u8(0x0F), two_bits = vdupq_n_u8(0x30);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const int8_t* sc = w[i].scales;
        int32_t isum = 0, offset = 0;
        for (int h = 0; h < 2; ++h) {
            const uint8_t* ql = w[i].ql + 64 * h;
            const uint8_t* qh = w[i].qh + 32 * h;
            for (int k = 0; k < 2; ++k) {  // values l = 16k .. 16k + 15 of each run of 32
                const uint8x16_t l0 = vld1q_u8(ql + 16 * k), l1 = vld1q_u8(ql + 32 + 16 * k), hb = vld1q_u8(qh + 16 * k);
                const uint8x16_t u[4] = {
                    vorrq_u8(vandq_u8(l0, low), vandq_u8(vshlq_n_u8(hb, 4), two_bits)),
                    vorrq_u8(vandq_u8(l1, low), vandq_u8(vshlq_n_u8(hb, 2), two_bits)),
                    vorrq_u8(vshrq_n_u8(l0, 4), vandq_u8(hb, two_bits)),
                    vorrq_u8(vshrq_n_u8(l1, 4), vandq_u8(vshrq_n_u8(hb, 2), two_bits)),
                };
                for (int c = 0; c < 4; ++c) {
                    const int8_t* xq = x[i].qs + 128 * h + 32 * c + 16 * k;
                    const int32_t d = vaddvq_s32(add_dot16(vdupq_n_s32(0), vreinterpretq_s8_u8(u[c]), vld1q_s8(xq)));
                    isum += sc[8 * h + 2 * c + k] * d;
                }
            }
        }
        for (int g = 0; g < 16; ++g) offset += sc[g] * x[i].bsums[g];
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum - 32 * offset);
    }
    return sum;
}

// Σ a·b over 16 pairs as one integer.
inline int32_t dot16(int8x16_t a, const int8_t* b) { return vaddvq_s32(add_dot16(vdupq_n_s32(0), a, vld1q_s8(b))); }

// Σ x over a Q8_0 block.
inline int32_t block_sum(const int8_t* x) { return vaddlvq_s8(vld1q_s8(x)) + vaddlvq_s8(vld1q_s8(x + 16)); }

// Bits 0..15 of h as bytes of 0x10 (set) or 0 (clear): the fifth bit of sixteen Q5 quants.
inline uint8x16_t fifth_bits(uint32_t h) {
    static const uint8_t kBit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    const uint8x16_t bytes = vcombine_u8(vdup_n_u8(uint8_t(h)), vdup_n_u8(uint8_t(h >> 8)));
    return vandq_u8(vtstq_u8(bytes, vld1q_u8(kBit)), vdupq_n_u8(0x10));
}

// A Q4_0-style block's 32 quants (low nibbles first) with the fifth bits of qh where given.
inline void nibbles(const uint8_t* qs, const uint8_t* qh, uint8x16_t& lo, uint8x16_t& hi) {
    const uint8x16_t q = vld1q_u8(qs);
    lo = vandq_u8(q, vdupq_n_u8(0x0F));
    hi = vshrq_n_u8(q, 4);
    if (qh) {
        uint32_t h;
        std::memcpy(&h, qh, 4);
        lo = vorrq_u8(lo, fifth_bits(h));
        hi = vorrq_u8(hi, fifth_bits(h >> 16));
    }
}

// Q4_1 and Q5_1 (x = d·q + m): the quants' sums, and the minimum against the activation's sum.
template <typename Block>
float dot_with_min_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const Block*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        uint8x16_t lo, hi;
        if constexpr (std::is_same_v<Block, BlockQ5_1>)
            nibbles(w[i].qs, w[i].qh, lo, hi);
        else
            nibbles(w[i].qs, nullptr, lo, hi);
        const int32_t isum = dot32(vreinterpretq_s8_u8(lo), vreinterpretq_s8_u8(hi), x[i].qs);
        const float dx = fp16_to_f32(x[i].d);
        sum += fp16_to_f32(w[i].d) * dx * float(isum);
        sum += fp16_to_f32(w[i].m) * dx * float(block_sum(x[i].qs));
    }
    return sum;
}

float dot_q5_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ5_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    const int8x16_t sixteen = vdupq_n_s8(16);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        uint8x16_t lo, hi;
        nibbles(w[i].qs, w[i].qh, lo, hi);
        const int32_t isum = dot32(vsubq_s8(vreinterpretq_s8_u8(lo), sixteen), vsubq_s8(vreinterpretq_s8_u8(hi), sixteen), x[i].qs);
        sum += fp16_to_f32(w[i].d) * fp16_to_f32(x[i].d) * float(isum);
    }
    return sum;
}

float dot_iq4_nl_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockIQ4_NL*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    const int8x16_t levels = vld1q_s8(kIq4Levels);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        uint8x16_t lo, hi;
        nibbles(w[i].qs, nullptr, lo, hi);
        const int32_t isum = dot32(vqtbl1q_s8(levels, lo), vqtbl1q_s8(levels, hi), x[i].qs);
        sum += fp16_to_f32(w[i].d) * fp16_to_f32(x[i].d) * float(isum);
    }
    return sum;
}

// Q2_K and Q3_K keep element 128h + 32s + l in bits 2s, 2s + 1 of qs[32h + l]: the two-bit
// quants of run s of half h.
inline uint8x16_t two_bits(uint8x16_t q, int s) {
    return vandq_u8(vshlq_u8(q, vdupq_n_s8(int8_t(-2 * s))), vdupq_n_u8(3));
}

float dot_q2_k_q8_k(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ2_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int32_t isum = 0, msum = 0;
        for (int h = 0; h < 2; ++h) {
            const uint8x16_t q0 = vld1q_u8(w[i].qs + 32 * h), q1 = vld1q_u8(w[i].qs + 32 * h + 16);
            for (int s = 0; s < 4; ++s) {
                const int g = 8 * h + 2 * s;
                const int8_t* xq = x[i].qs + 128 * h + 32 * s;
                isum += (w[i].scales[g] & 0xF) * dot16(vreinterpretq_s8_u8(two_bits(q0, s)), xq);
                isum += (w[i].scales[g + 1] & 0xF) * dot16(vreinterpretq_s8_u8(two_bits(q1, s)), xq + 16);
            }
        }
        for (int g = 0; g < 16; ++g) msum += (w[i].scales[g] >> 4) * x[i].bsums[g];
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
        sum -= fp16_to_f32(w[i].dmin) * x[i].d * float(msum);
    }
    return sum;
}

// Q3_K: the two low bits as Q2_K's, less 4 where the high bit (hmask[l] bit 4h + s) is clear.
float dot_q3_k_q8_k(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ3_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const int8x16_t four = vdupq_n_s8(4);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int8_t scales[16];
        q3_k_scales(w[i].scales, scales);
        const uint8x16_t m0 = vld1q_u8(w[i].hmask), m1 = vld1q_u8(w[i].hmask + 16);
        int32_t isum = 0;
        for (int h = 0; h < 2; ++h) {
            const uint8x16_t q0 = vld1q_u8(w[i].qs + 32 * h), q1 = vld1q_u8(w[i].qs + 32 * h + 16);
            for (int s = 0; s < 4; ++s) {
                const int g = 8 * h + 2 * s;
                const int8_t* xq = x[i].qs + 128 * h + 32 * s;
                const auto value = [&](uint8x16_t q, uint8x16_t m) {
                    const uint8x16_t high = vshlq_n_u8(vandq_u8(vshlq_u8(m, vdupq_n_s8(int8_t(-(4 * h + s)))), vdupq_n_u8(1)), 2);
                    return vsubq_s8(vreinterpretq_s8_u8(vorrq_u8(two_bits(q, s), high)), four);
                };
                isum += scales[g] * dot16(value(q0, m0), xq);
                isum += scales[g + 1] * dot16(value(q1, m1), xq + 16);
            }
        }
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
    }
    return sum;
}

float dot_iq4_xs_q8_k(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockIQ4_XS*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const int8x16_t levels = vld1q_s8(kIq4Levels);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int32_t isum = 0;
        for (int j = 0; j < 8; ++j) {
            const int ls = ((w[i].scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((w[i].scales_h >> (2 * j)) & 3) << 4);
            uint8x16_t lo, hi;
            nibbles(w[i].qs + 16 * j, nullptr, lo, hi);
            isum += (ls - 32) * dot32(vqtbl1q_s8(levels, lo), vqtbl1q_s8(levels, hi), x[i].qs + 32 * j);
        }
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
    }
    return sum;
}

inline float32x4_t load_f16(const uint16_t* p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }

float dot_f16(int64_t n, const uint16_t* w, const uint16_t* x) {
    float32x4_t acc[4] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 4; ++k) acc[k] = vfmaq_f32(acc[k], load_f16(w + i + 4 * k), load_f16(x + i + 4 * k));
    float sum = vaddvq_f32(vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3])));
    for (; i < n; ++i) sum += fp16_to_f32(w[i]) * fp16_to_f32(x[i]);
    return sum;
}

void axpy_f16(int64_t n, float a, const uint16_t* x, float* y) {
    const float32x4_t va = vdupq_n_f32(a);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, vfmaq_f32(vld1q_f32(y + i), va, load_f16(x + i)));
    for (; i < n; ++i) y[i] = std::fma(a, fp16_to_f32(x[i]), y[i]);
}

// As the scalar twin: each element gets (a · d) · q with one rounding of the product-sum.
void axpy_q4_0(int64_t n, float a, const void* xv, float* y) {
    auto* x = static_cast<const BlockQ4_0*>(xv);
    const uint8x16_t low = vdupq_n_u8(0x0F);
    const int8x16_t eight = vdupq_n_s8(8);
    for (int64_t b = 0; b < n / kQK; ++b) {
        const float32x4_t d = vdupq_n_f32(a * fp16_to_f32(x[b].d));
        const uint8x16_t packed = vld1q_u8(x[b].qs);
        const int8x16_t halves[2] = {vsubq_s8(vreinterpretq_s8_u8(vandq_u8(packed, low)), eight),
                                     vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(packed, 4)), eight)};
        float* yb = y + b * kQK;
        for (int h = 0; h < 2; ++h) {
            const int16x8_t wide[2] = {vmovl_s8(vget_low_s8(halves[h])), vmovl_s8(vget_high_s8(halves[h]))};
            for (int k = 0; k < 4; ++k) {
                const int16x4_t part = k % 2 ? vget_high_s16(wide[k / 2]) : vget_low_s16(wide[k / 2]);
                float* yk = yb + 16 * h + 4 * k;
                vst1q_f32(yk, vfmaq_f32(vld1q_f32(yk), d, vcvtq_f32_s32(vmovl_s16(part))));
            }
        }
    }
}

void axpy_q8_0(int64_t n, float a, const void* xv, float* y) {
    auto* x = static_cast<const BlockQ8_0*>(xv);
    for (int64_t b = 0; b < n / kQK; ++b) {
        const float32x4_t d = vdupq_n_f32(a * fp16_to_f32(x[b].d));
        float* yb = y + b * kQK;
        for (int h = 0; h < 2; ++h) {
            const int8x16_t q = vld1q_s8(x[b].qs + 16 * h);
            const int16x8_t wide[2] = {vmovl_s8(vget_low_s8(q)), vmovl_s8(vget_high_s8(q))};
            for (int k = 0; k < 4; ++k) {
                const int16x4_t part = k % 2 ? vget_high_s16(wide[k / 2]) : vget_low_s16(wide[k / 2]);
                float* yk = yb + 16 * h + 4 * k;
                vst1q_f32(yk, vfmaq_f32(vld1q_f32(yk), d, vcvtq_f32_s32(vmovl_s16(part))));
            }
        }
    }
}

}  // namespace

const KernelTable& neon_kernels() {
    static const KernelTable table = [] {
        KernelTable t = reference_kernels();
        t.isa = "neon";
        t.dot_f16 = dot_f16;
        t.dot_q4_0_q8_0 = dot_q4_0_q8_0;
        t.dot_q8_0_q8_0 = dot_q8_0_q8_0;
        t.dot4_q4_0_q8_0 = dot4_by_rows<dot_q4_0_q8_0>;
        t.axpy_f16 = axpy_f16;
        t.axpy_q4_0 = axpy_q4_0;
        t.axpy_q8_0 = axpy_q8_0;
        t.axpy8_q4_0 = axpy8_by_rows<axpy_q4_0>;
        t.axpy8_q8_0 = axpy8_by_rows<axpy_q8_0>;
        t.axpy8_f16 = axpy8_f16_by_rows<axpy_f16>;
        t.axpy_tokens_q4_0 = axpy_tokens_by_rows<axpy_q4_0, sizeof(BlockQ4_0)>;
        t.axpy_tokens_q8_0 = axpy_tokens_by_rows<axpy_q8_0, sizeof(BlockQ8_0)>;
        t.dot_q4_k_q8_k = dot_k_with_mins<BlockQ4_K>;
        t.dot_q6_k_q8_k = dot_q6_k_q8_k;
        t.dot_q4_k_q8_k_x4 = dot_tokens4_by_calls<dot_k_with_mins<BlockQ4_K>>;
        t.dot_q6_k_q8_k_x4 = dot_tokens4_by_calls<dot_q6_k_q8_k>;
        t.dot_q5_k_q8_k = dot_k_with_mins<BlockQ5_K>;
        t.dot_q5_k_q8_k_x4 = dot_tokens4_by_calls<dot_k_with_mins<BlockQ5_K>>;
        t.dot_q4_1_q8_0 = dot_with_min_q8_0<BlockQ4_1>;
        t.dot_q4_1_q8_0_x4 = dot_tokens4_by_calls<dot_with_min_q8_0<BlockQ4_1>>;
        t.dot_q5_0_q8_0 = dot_q5_0_q8_0;
        t.dot_q5_0_q8_0_x4 = dot_tokens4_by_calls<dot_q5_0_q8_0>;
        t.dot_q5_1_q8_0 = dot_with_min_q8_0<BlockQ5_1>;
        t.dot_q5_1_q8_0_x4 = dot_tokens4_by_calls<dot_with_min_q8_0<BlockQ5_1>>;
        t.dot_iq4_nl_q8_0 = dot_iq4_nl_q8_0;
        t.dot_iq4_nl_q8_0_x4 = dot_tokens4_by_calls<dot_iq4_nl_q8_0>;
        t.dot_q2_k_q8_k = dot_q2_k_q8_k;
        t.dot_q2_k_q8_k_x4 = dot_tokens4_by_calls<dot_q2_k_q8_k>;
        t.dot_q3_k_q8_k = dot_q3_k_q8_k;
        t.dot_q3_k_q8_k_x4 = dot_tokens4_by_calls<dot_q3_k_q8_k>;
        t.dot_iq4_xs_q8_k = dot_iq4_xs_q8_k;
        t.dot_iq4_xs_q8_k_x4 = dot_tokens4_by_calls<dot_iq4_xs_q8_k>;
        return t;
    }();
    return table;
}

}  // namespace ember::tensor

#endif

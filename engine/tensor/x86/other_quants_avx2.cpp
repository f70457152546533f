// AVX2 dot products of the weight types files carry besides Q4_0/Q8_0 and Q4_K/Q5_K/Q6_K: the
// 32-element Q4_1, Q5_0, Q5_1 and IQ4_NL against Q8_0 activations, and Q2_K, Q3_K and IQ4_XS
// (Q2_K, Q3_K_S/M/L and IQ4_XS files) against Q8_K. Each block's integer sum is exact, as the
// scalar twins' (tensor/quant_dots_ref.cpp); only the order of the float sums differs.
#include <immintrin.h>

#include <cstring>

#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

// Σ u·x of 32 unsigned weight quants (< 128) and 32 activations, into 8 int32 lanes.
inline __m256i dot_u8_i8(__m256i u, __m256i x) { return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)); }

// Σ a·x of 32 signed weight values and 32 activations: |a| against x with a's sign.
inline __m256i dot_i8_i8(__m256i a, __m256i x) { return dot_u8_i8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(x, a)); }

// Scales lo and hi of eight 16-bit scales, spread over the low and the high lane (hi = lo + 1
// by default).
inline __m256i scale_pair(__m128i scales16, int lo, int hi = -1) {
    if (hi < 0) hi = lo + 1;
    const __m256i pick = _mm256_set_m128i(_mm_set1_epi16(int16_t(0x0100 + 0x0202 * hi)),
                                          _mm_set1_epi16(int16_t(0x0100 + 0x0202 * lo)));
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(scales16), pick);
}

// The same dots, each lane's 16 elements weighted by that lane's scale (scale_pair()).
inline __m256i scaled_dot_u8(__m256i u, __m256i x, __m256i scales) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), scales);
}
inline __m256i scaled_dot_i8(__m256i a, __m256i x, __m256i scales) {
    return scaled_dot_u8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(x, a), scales);
}

// Q3_K's sixteen 6-bit scales less 32, as 16-bit lanes: the low 4 bits of scale j are nibble
// j / 8 of byte j % 8, the high 2 bits are bits 2·(j / 4) of byte 8 + j % 4.
inline __m256i q3_k_scales16(const uint8_t* packed) {
    int64_t low_bytes;
    int32_t high_bytes;
    std::memcpy(&low_bytes, packed, 8);
    std::memcpy(&high_bytes, packed + 8, 4);
    const __m128i a = _mm_cvtsi64_si128(low_bytes);
    const __m128i low = _mm_and_si128(_mm_unpacklo_epi64(a, _mm_srli_epi16(a, 4)), _mm_set1_epi8(0x0F));
    const __m128i high =
        _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(high_bytes), _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(0x03));
    return _mm256_cvtepi8_epi16(_mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32)));
}

inline __m128i lane(__m256i v, int h) { return h == 0 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1); }

// A 32-element block's 16 packed bytes as 32 nibbles: low nibbles first, then high.
inline __m256i nibbles(const uint8_t* qs) {
    const __m128i packed = load128(qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0F));
}

// Bit j of the 32-bit field at qh as 0x10 in byte j: a Q5 block's fifth bits.
inline __m256i fifth_bits(const uint8_t* qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    // Byte j takes byte j / 8 of the field, then keeps bit j % 8.
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(int(bits)),
                                               _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// Σ x over a Q8_0 block, into 8 int32 lanes.
inline __m256i block_sums(__m256i x) { return dot_i8_i8(_mm256_set1_epi8(1), x); }

// The 16 IQ4 levels, in both 128-bit lanes, for a byte shuffle to look nibbles up in.
inline __m256i iq4_table() { return _mm256_broadcastsi128_si256(load128(kIq4Levels)); }

// Each kernel below takes kTokens activation rows at once (1, or 4 for a batch): a weight block is
// unpacked once for all of them, and out[t] is token t's dot product.

// Q4_1 and Q5_1: unsigned quants with a minimum, which meets the activation's block sum.
template <typename Block, bool kFifthBit, int kTokens>
void dot_with_min_q8_0(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const Block*>(wv);
    __m256 acc[kTokens], acc_min[kTokens];
    for (int t = 0; t < kTokens; ++t) acc[t] = acc_min[t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK; ++i) {
        __m256i q = nibbles(w[i].qs);
        if constexpr (kFifthBit) q = _mm256_or_si256(q, fifth_bits(w[i].qh));
        const float d = half(w[i].d), m = half(w[i].m);
        for (int t = 0; t < kTokens; ++t) {
            const BlockQ8_0& x = static_cast<const BlockQ8_0*>(xv[t])[i];
            const __m256i xq = load(x.qs);
            const float dx = half(x.d);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * dx), _mm256_cvtepi32_ps(dot_u8_i8(q, xq)), acc[t]);
            acc_min[t] = _mm256_fmadd_ps(_mm256_set1_ps(m * dx), _mm256_cvtepi32_ps(block_sums(xq)), acc_min[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) out[t] = hsum(acc[t]) + hsum(acc_min[t]);
}

// Q5_0 and IQ4_NL: signed values, one scale per block.
template <typename Block, int kTokens, typename Values>
void dot_signed_q8_0(int64_t n, const void* wv, const void* const* xv, float* out, Values values) {
    auto* w = static_cast<const Block*>(wv);
    __m256 acc[kTokens];
    for (int t = 0; t < kTokens; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK; ++i) {
        const __m256i v = values(w[i]);
        const float d = half(w[i].d);
        for (int t = 0; t < kTokens; ++t) {
            const BlockQ8_0& x = static_cast<const BlockQ8_0*>(xv[t])[i];
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * half(x.d)), _mm256_cvtepi32_ps(dot_i8_i8(v, load(x.qs))), acc[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) out[t] = hsum(acc[t]);
}

template <int kTokens>
void dot_q5_0(int64_t n, const void* w, const void* const* x, float* out) {
    dot_signed_q8_0<BlockQ5_0, kTokens>(n, w, x, out, [](const BlockQ5_0& b) {
        return _mm256_sub_epi8(_mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh)), _mm256_set1_epi8(16));
    });
}

template <int kTokens>
void dot_iq4_nl(int64_t n, const void* w, const void* const* x, float* out) {
    const __m256i table = iq4_table();
    dot_signed_q8_0<BlockIQ4_NL, kTokens>(n, w, x, out, [&](const BlockIQ4_NL& b) { return _mm256_shuffle_epi8(table, nibbles(b.qs)); });
}

// Q2_K's and Q3_K's shared part: the value 128h + 32s + l has its quant in run (h, s), which
// quants(q, h, s) unpacks from the 32 bytes q = qs[32h..]; each run meets the activation's 32
// bytes 128h + 32s with the scales (16-bit lanes) of its two groups of 16. acc[t] gets token t's
// integer sums for block i.
template <int kTokens, typename Block, typename Quants>
void scaled_runs(const Block& w, __m256i scales, Quants quants, const void* const* xv, int64_t i, __m256i* acc) {
    for (int t = 0; t < kTokens; ++t) acc[t] = _mm256_setzero_si256();
    for (int h = 0; h < 2; ++h) {
        const __m256i q = load(w.qs + 32 * h);
        const __m128i half_scales = lane(scales, h);
        for (int s = 0; s < 4; ++s) {
            const __m256i u = quants(q, h, s);
            const __m256i pair = scale_pair(half_scales, 2 * s);
            for (int t = 0; t < kTokens; ++t) {
                const BlockQ8_K& x = static_cast<const BlockQ8_K*>(xv[t])[i];
                acc[t] = _mm256_add_epi32(acc[t], scaled_dot_u8(u, load(x.qs + 128 * h + 32 * s), pair));
            }
        }
    }
}

// Q2_K: element 128h + 32s + l's quant is bits 2s of qs[32h + l]; group g = e / 16 has scale
// scales[g] & 15 and minimum scales[g] >> 4, which meets the activation's group sum.
template <int kTokens>
void dot_q2_k(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const BlockQ2_K*>(wv);
    const __m256i two_bits = _mm256_set1_epi8(0x03);
    __m256 acc_f[kTokens];
    for (int t = 0; t < kTokens; ++t) acc_f[t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const __m128i packed = load128(w[i].scales);
        const __m256i scales = _mm256_cvtepu8_epi16(_mm_and_si128(packed, _mm_set1_epi8(0x0F)));
        const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F)));
        __m256i acc[kTokens];
        scaled_runs<kTokens>(w[i], scales, [&](__m256i q, int, int s) {
            return _mm256_and_si256(_mm256_srli_epi16(q, 2 * s), two_bits);
        }, xv, i, acc);
        const float d = half(w[i].d), dmin = half(w[i].dmin);
        for (int t = 0; t < kTokens; ++t) {
            const BlockQ8_K& x = static_cast<const BlockQ8_K*>(xv[t])[i];
            const __m256i msum = _mm256_madd_epi16(mins, load(x.bsums));
            acc_f[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * x.d), _mm256_cvtepi32_ps(acc[t]), acc_f[t]);
            acc_f[t] = _mm256_fnmadd_ps(_mm256_set1_ps(dmin * x.d), _mm256_cvtepi32_ps(msum), acc_f[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) out[t] = hsum(acc_f[t]);
}

// Q3_K: Q2_K's two low bits, a third from bit e / 32 of hmask[e % 32]; the value is that 3-bit
// quant less 4, taken here as the unsigned quant against the activation less 4 times its group
// sums.
template <int kTokens>
void dot_q3_k(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const BlockQ3_K*>(wv);
    const __m256i two_bits = _mm256_set1_epi8(0x03), one = _mm256_set1_epi8(0x01);
    __m256 acc_f[kTokens];
    for (int t = 0; t < kTokens; ++t) acc_f[t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const __m256i scales = q3_k_scales16(w[i].scales);
        const __m256i hmask = load(w[i].hmask);
        __m256i acc[kTokens];
        scaled_runs<kTokens>(w[i], scales, [&](__m256i q, int h, int s) {
            const __m256i low = _mm256_and_si256(_mm256_srli_epi16(q, 2 * s), two_bits);
            const __m256i high = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hmask, 4 * h + s), one), 2);
            return _mm256_or_si256(low, high);
        }, xv, i, acc);
        const float d = half(w[i].d);
        for (int t = 0; t < kTokens; ++t) {
            const BlockQ8_K& x = static_cast<const BlockQ8_K*>(xv[t])[i];
            const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(scales, load(x.bsums)), 2);
            acc_f[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * x.d), _mm256_cvtepi32_ps(_mm256_sub_epi32(acc[t], offset)), acc_f[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) out[t] = hsum(acc_f[t]);
}

// IQ4_XS: eight sub-blocks of 32, each 16 bytes of IQ4_NL nibbles and a 6-bit scale less 32.
// One 32-byte load holds sub-blocks 2p and 2p + 1 in its two lanes; their levels are re-paired
// into element order once, so each token's activation loads as it lies.
template <int kTokens>
void dot_iq4_xs(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const BlockIQ4_XS*>(wv);
    const __m256i table = iq4_table(), nibble = _mm256_set1_epi8(0x0F);
    __m256 acc_f[kTokens];
    for (int t = 0; t < kTokens; ++t) acc_f[t] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        alignas(16) int16_t ls[8];
        for (int j = 0; j < 8; ++j)
            ls[j] = int16_t((((w[i].scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((w[i].scales_h >> (2 * j)) & 3) << 4)) - 32);
        const __m128i scales = _mm_load_si128(reinterpret_cast<const __m128i*>(ls));
        __m256i acc[kTokens];
        for (int t = 0; t < kTokens; ++t) acc[t] = _mm256_setzero_si256();
        for (int p = 0; p < 4; ++p) {
            const __m256i q = load(w[i].qs + 32 * p);
            const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(q, nibble));
            const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble));
            const __m256i first = _mm256_permute2x128_si256(lo, hi, 0x20), second = _mm256_permute2x128_si256(lo, hi, 0x31);
            const __m256i s_first = scale_pair(scales, 2 * p, 2 * p), s_second = scale_pair(scales, 2 * p + 1, 2 * p + 1);
            for (int t = 0; t < kTokens; ++t) {
                const int8_t* xq = static_cast<const BlockQ8_K*>(xv[t])[i].qs + 64 * p;
                acc[t] = _mm256_add_epi32(acc[t], _mm256_add_epi32(scaled_dot_i8(first, load(xq), s_first),
                                                                   scaled_dot_i8(second, load(xq + 32), s_second)));
            }
        }
        const float d = half(w[i].d);
        for (int t = 0; t < kTokens; ++t) {
            const __m256 scale = _mm256_set1_ps(d * static_cast<const BlockQ8_K*>(xv[t])[i].d);
            acc_f[t] = _mm256_fmadd_ps(scale, _mm256_cvtepi32_ps(acc[t]), acc_f[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) out[t] = hsum(acc_f[t]);
}

template <void (*Kernel)(int64_t, const void*, const void* const*, float*)>
float one_token(int64_t n, const void* w, const void* x) {
    float out;
    Kernel(n, w, &x, &out);
    return out;
}

}  // namespace

float dot_q4_1_q8_0_avx2(int64_t n, const void* w, const void* x) { return one_token<dot_with_min_q8_0<BlockQ4_1, false, 1>>(n, w, x); }
float dot_q5_1_q8_0_avx2(int64_t n, const void* w, const void* x) { return one_token<dot_with_min_q8_0<BlockQ5_1, true, 1>>(n, w, x); }
float dot_q5_0_q8_0_avx2(int64_t n, const void* w, const void* x) { return one_token<dot_q5_0<1>>(n, w, x); }
float dot_iq4_nl_q8_0_avx2(int64_t n, const void* w, const void* x) { return one_token<dot_iq4_nl<1>>(n, w, x); }
float dot_q2_k_q8_k_avx2(int64_t n, const void* w, const void* x) { return one_token<dot_q2_k<1>>(n, w, x); }
float dot_q3_k_q8_k_avx2(int64_t n, const void* w, const void* x) { return one_token<dot_q3_k<1>>(n, w, x); }
float dot_iq4_xs_q8_k_avx2(int64_t n, const void* w, const void* x) { return one_token<dot_iq4_xs<1>>(n, w, x); }

void dot_q4_1_q8_0_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) { dot_with_min_q8_0<BlockQ4_1, false, 4>(n, w, x, out); }
void dot_q5_1_q8_0_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) { dot_with_min_q8_0<BlockQ5_1, true, 4>(n, w, x, out); }
void dot_q5_0_q8_0_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) { dot_q5_0<4>(n, w, x, out); }
void dot_iq4_nl_q8_0_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) { dot_iq4_nl<4>(n, w, x, out); }
void dot_q2_k_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) { dot_q2_k<4>(n, w, x, out); }
void dot_q3_k_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) { dot_q3_k<4>(n, w, x, out); }
void dot_iq4_xs_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) { dot_iq4_xs<4>(n, w, x, out); }

}  // namespace ember::tensor

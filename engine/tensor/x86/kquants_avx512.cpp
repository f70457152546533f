// AVX-512 dot products of Q4_K, Q5_K and Q6_K with Q8_K activations. A sub-block pair (2p, 2p + 1)
// is one 512-bit vector of unsigned quants: the 32 bytes qs[32p..] twice, the low nibbles in
// the lower half and the high ones in the upper, which lines up with the activation's 64 bytes
// x[64p..]. maddubs sums product pairs into 16-bit lanes exactly (|q·x| ≤ 31·128), and madd
// weights each sub-block's lanes by its scale into 32-bit lanes. Only the order of the float sums differs
// from the scalar kernels (tensor/quant_dots_ref.cpp).
#include <immintrin.h>

#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"

namespace ember::tensor {
namespace {

// The eight scales (bytes 0-7) and minimums (bytes 8-15) of a Q4_K/Q5_K block.
inline __m128i scales_and_mins_vector(const uint8_t* packed) {
    alignas(16) uint8_t bytes[16];
    ember::tensor::k_scales_and_mins(packed, bytes);
    return _mm_load_si128(reinterpret_cast<const __m128i*>(bytes));
}

// 32 bytes twice, the upper copy shifted right by `shift` bits (per 64-bit lane).
inline __m512i halves(const uint8_t* p, int shift_lo, int shift_hi) {
    const __m512i both = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    const __m512i shifts = _mm512_set_epi64(shift_hi, shift_hi, shift_hi, shift_hi, shift_lo, shift_lo, shift_lo, shift_lo);
    return _mm512_srlv_epi64(both, shifts);
}

template <typename Block, bool kFifthBit, int kTokens>
void dot_k_with_mins(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const Block*>(wv);
    const BlockQ8_K* x[kTokens];
    for (int t = 0; t < kTokens; ++t) x[t] = static_cast<const BlockQ8_K*>(xv[t]);
    const __m512i nibble = _mm512_set1_epi8(0x0F), one = _mm512_set1_epi8(1);
    __m512 acc[kTokens];
    __m128 acc_min[kTokens];
    for (int t = 0; t < kTokens; ++t) {
        acc[t] = _mm512_setzero_ps();
        acc_min[t] = _mm_setzero_ps();
    }
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const __m128i scales_mins = scales_and_mins_vector(w[i].scales);
        const __m128i mins = _mm_cvtepu8_epi16(_mm_unpackhi_epi64(scales_mins, scales_mins));
        const __m512i scales16 = _mm512_cvtepu8_epi16(_mm256_castsi128_si256(scales_mins));  // 16-bit lanes 0-7: the scales
        __m512i q[4], s[4];
        for (int p = 0; p < 4; ++p) {
            q[p] = _mm512_and_si512(halves(w[i].qs + 32 * p, 0, 4), nibble);
            if constexpr (kFifthBit) {
                const __m512i bit = _mm512_and_si512(halves(w[i].qh, 2 * p, 2 * p + 1), one);
                q[p] = _mm512_or_si512(q[p], _mm512_slli_epi64(bit, 4));
            }
            // Scale 2p in the 16-bit lanes 0-15, scale 2p + 1 in lanes 16-31.
            s[p] = _mm512_permutexvar_epi16(_mm512_inserti64x4(_mm512_set1_epi16(int16_t(2 * p)), _mm256_set1_epi16(int16_t(2 * p + 1)), 1),
                                            scales16);
        }
        const float d = fp16_to_f32(w[i].d), dmin = fp16_to_f32(w[i].dmin);
        for (int t = 0; t < kTokens; ++t) {
            __m512i sumi = _mm512_setzero_si512();
            for (int p = 0; p < 4; ++p) {
                const __m512i xq = _mm512_loadu_si512(x[t][i].qs + 64 * p);
                sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(_mm512_maddubs_epi16(q[p], xq), s[p]));
            }
            const float dx = x[t][i].d;
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * dx), _mm512_cvtepi32_ps(sumi), acc[t]);
            // Σ min_j · (bsum_2j + bsum_2j+1).
            const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t][i].bsums));
            const __m128i pair_sums = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
            acc_min[t] = _mm_fmadd_ps(_mm_set1_ps(dmin * dx), _mm_cvtepi32_ps(_mm_madd_epi16(mins, pair_sums)), acc_min[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) {
        __m128 m = _mm_add_ps(acc_min[t], _mm_movehl_ps(acc_min[t], acc_min[t]));
        m = _mm_add_ss(m, _mm_movehdup_ps(m));
        out[t] = _mm512_reduce_add_ps(acc[t]) - _mm_cvtss_f32(m);
    }
}

// Q6_K: quants 0..63 (stored +32) from four low bits in ql and two high bits in qh. Chunks 0
// and 1 of a 128-element half (ql[0..63] low nibbles) line up with the activation's first 64
// bytes, chunks 2 and 3 (high nibbles) with the next 64. Scales are per 16 elements, signed;
// the +32 comes off as 32 · Σ scale_g · bsum_g.
template <int kTokens>
void dot_q6_k(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const BlockQ6_K*>(wv);
    const BlockQ8_K* x[kTokens];
    for (int t = 0; t < kTokens; ++t) x[t] = static_cast<const BlockQ8_K*>(xv[t]);
    const __m512i nibble = _mm512_set1_epi8(0x0F), two_bits = _mm512_set1_epi8(0x03);
    __m512 acc[kTokens];
    for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const __m256i scales16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].scales)));
        const __m512i scales512 = _mm512_castsi256_si512(scales16);
        __m512i u[4], s[4];
        for (int h = 0; h < 2; ++h) {
            const __m512i ql = _mm512_loadu_si512(w[i].ql + 64 * h);
            const uint8_t* qh = w[i].qh + 32 * h;
            const auto high = [&](int lo_shift, int hi_shift) {
                return _mm512_slli_epi64(_mm512_and_si512(halves(qh, lo_shift, hi_shift), two_bits), 4);
            };
            u[2 * h] = _mm512_or_si512(_mm512_and_si512(ql, nibble), high(0, 2));
            u[2 * h + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi64(ql, 4), nibble), high(4, 6));
            for (int k = 0; k < 2; ++k) {
                const int g = 8 * h + 4 * k;  // the first of the four groups of these 64 elements
                const __m512i index = _mm512_inserti64x4(
                    _mm512_castsi256_si512(_mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(int16_t(g))),
                                                                   _mm_set1_epi16(int16_t(g + 1)), 1)),
                    _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(int16_t(g + 2))), _mm_set1_epi16(int16_t(g + 3)), 1),
                    1);
                s[2 * h + k] = _mm512_permutexvar_epi16(index, scales512);
            }
        }
        const float d = fp16_to_f32(w[i].d);
        for (int t = 0; t < kTokens; ++t) {
            __m512i sumi = _mm512_setzero_si512();
            for (int c = 0; c < 4; ++c) {
                const __m512i xq = _mm512_loadu_si512(x[t][i].qs + 64 * c);
                sumi = _mm512_add_epi32(sumi, _mm512_madd_epi16(_mm512_maddubs_epi16(u[c], xq), s[c]));
            }
            const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t][i].bsums));
            const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(bsums, scales16), 5);
            sumi = _mm512_sub_epi32(sumi, _mm512_zextsi256_si512(offset));
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * x[t][i].d), _mm512_cvtepi32_ps(sumi), acc[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) out[t] = _mm512_reduce_add_ps(acc[t]);
}

}  // namespace

float dot_q6_k_q8_k_avx512(int64_t n, const void* w, const void* x) {
    float out;
    dot_q6_k<1>(n, w, &x, &out);
    return out;
}
void dot_q6_k_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out) { dot_q6_k<4>(n, w, x, out); }

float dot_q4_k_q8_k_avx512(int64_t n, const void* w, const void* x) {
    float out;
    dot_k_with_mins<BlockQ4_K, false, 1>(n, w, &x, &out);
    return out;
}
float dot_q5_k_q8_k_avx512(int64_t n, const void* w, const void* x) {
    float out;
    dot_k_with_mins<BlockQ5_K, true, 1>(n, w, &x, &out);
    return out;
}
void dot_q4_k_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out) {
    dot_k_with_mins<BlockQ4_K, false, 4>(n, w, x, out);
}
void dot_q5_k_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out) {
    dot_k_with_mins<BlockQ5_K, true, 4>(n, w, x, out);
}

}  // namespace ember::tensor

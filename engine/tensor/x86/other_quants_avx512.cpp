// AVX-512 (VNNI) dot products of IQ4_XS and Q2_K with Q8_K: each 512-bit vector holds 64 weight
// values in element order, which lines up with 64 bytes of the activation, and vpdpbusd
// multiplies unsigned weight bytes by the signed activation, four products to a 32-bit lane, so
// each 16-value group keeps four lanes of its own for its scale. IQ4_XS's signed levels are
// looked up with 128 added, and 128 times the activation's group sums come off at the end of each
// block. Integer sums are exact, as the scalar twins' (tensor/quant_dots_ref.cpp); only the order
// of float sums differs.
#include <immintrin.h>

#include <cstdint>

#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

// The IQ4 levels plus 128, as unsigned bytes, in every 128-bit lane.
inline __m512i iq4_table_plus_128() {
    alignas(16) uint8_t levels[16];
    for (int i = 0; i < 16; ++i) levels[i] = uint8_t(kIq4Levels[i] + 128);
    return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(levels)));
}

template <int kTokens>
void dot_iq4_xs(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const BlockIQ4_XS*>(wv);
    const __m512i table = iq4_table_plus_128(), nibble = _mm512_set1_epi8(0x0F);
    // Per 64-bit lane: the second and fourth 128-bit chunks take the high nibbles.
    const __m512i shifts = _mm512_set_epi64(4, 4, 0, 0, 4, 4, 0, 0);
    __m512 acc[kTokens];
    __m256 acc_offset[kTokens];
    for (int t = 0; t < kTokens; ++t) {
        acc[t] = _mm512_setzero_ps();
        acc_offset[t] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        alignas(32) int16_t ls[16];  // each sub-block's scale twice, to meet the bsums pairwise
        for (int j = 0; j < 8; ++j) {
            const int s = (((w[i].scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((w[i].scales_h >> (2 * j)) & 3) << 4)) - 32;
            ls[2 * j] = ls[2 * j + 1] = int16_t(s);
        }
        const __m256i pair_scales = _mm256_load_si256(reinterpret_cast<const __m256i*>(ls));
        // Pair p's scales over its 32-bit lanes: sub-block 2p's in lanes 0-7, 2p + 1's in 8-15.
        const __m512i scales32 = _mm512_cvtepi16_epi32(pair_scales);
        __m512i u[4], lane_scales[4];
        for (int p = 0; p < 4; ++p) {
            lane_scales[p] = _mm512_permutexvar_epi32(
                _mm512_inserti64x4(_mm512_set1_epi32(4 * p), _mm256_set1_epi32(4 * p + 2), 1), scales32);
            const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].qs + 32 * p));
            const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].qs + 32 * p + 16));
            const __m512i chunks = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_broadcastsi128_si256(lo)),
                                                      _mm256_broadcastsi128_si256(hi), 1);
            u[p] = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srlv_epi64(chunks, shifts), nibble));
        }
        const float d = half(w[i].d);
        for (int t = 0; t < kTokens; ++t) {
            const BlockQ8_K& x = static_cast<const BlockQ8_K*>(xv[t])[i];
            __m512i sum = _mm512_setzero_si512();
            for (int p = 0; p < 4; ++p) {
                const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[p], _mm512_loadu_si512(x.qs + 64 * p));
                sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(dot, lane_scales[p]));
            }
            const __m256i offset = _mm256_madd_epi16(pair_scales, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * x.d), _mm512_cvtepi32_ps(sum), acc[t]);
            acc_offset[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * x.d), _mm256_cvtepi32_ps(offset), acc_offset[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) - 128.0f * hsum(acc_offset[t]);
}

// Q2_K: for h and s, the 32 values 128h + 32s + l are bits 2s of qs[32h + l]; one vector takes
// s and s + 1. Group g = e / 16 has scale scales[g] & 15 and minimum scales[g] >> 4.
template <int kTokens>
void dot_q2_k(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const BlockQ2_K*>(wv);
    const __m512i two_bits = _mm512_set1_epi8(0x03);
    __m512 acc[kTokens];
    __m256 acc_min[kTokens];
    for (int t = 0; t < kTokens; ++t) {
        acc[t] = _mm512_setzero_ps();
        acc_min[t] = _mm256_setzero_ps();
    }
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].scales));
        const __m512i scales32 = _mm512_cvtepu8_epi32(_mm_and_si128(packed, _mm_set1_epi8(0x0F)));
        const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F)));
        __m512i u[4], lane_scales[4];
        for (int v = 0; v < 4; ++v) {  // v = 2h + s/2
            const int h = v / 2, s = 2 * (v % 2);
            const __m512i both = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i].qs + 32 * h)));
            const __m512i shifts = _mm512_set_epi64(2 * s + 2, 2 * s + 2, 2 * s + 2, 2 * s + 2, 2 * s, 2 * s, 2 * s, 2 * s);
            u[v] = _mm512_and_si512(_mm512_srlv_epi64(both, shifts), two_bits);
            const int g = 4 * v;  // the vector's first group
            lane_scales[v] = _mm512_permutexvar_epi32(
                _mm512_set_epi32(g + 3, g + 3, g + 3, g + 3, g + 2, g + 2, g + 2, g + 2, g + 1, g + 1, g + 1, g + 1, g, g, g, g),
                scales32);
        }
        const float d = half(w[i].d), dmin = half(w[i].dmin);
        for (int t = 0; t < kTokens; ++t) {
            const BlockQ8_K& x = static_cast<const BlockQ8_K*>(xv[t])[i];
            __m512i sum = _mm512_setzero_si512();
            for (int v = 0; v < 4; ++v) {
                const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u[v], _mm512_loadu_si512(x.qs + 64 * v));
                sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(dot, lane_scales[v]));
            }
            const __m256i msum = _mm256_madd_epi16(mins, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.bsums)));
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(d * x.d), _mm512_cvtepi32_ps(sum), acc[t]);
            acc_min[t] = _mm256_fmadd_ps(_mm256_set1_ps(dmin * x.d), _mm256_cvtepi32_ps(msum), acc_min[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) out[t] = _mm512_reduce_add_ps(acc[t]) - hsum(acc_min[t]);
}

}  // namespace

float dot_q2_k_q8_k_avx512(int64_t n, const void* w, const void* x) {
    float out;
    dot_q2_k<1>(n, w, &x, &out);
    return out;
}

void dot_q2_k_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out) { dot_q2_k<4>(n, w, x, out); }

float dot_iq4_xs_q8_k_avx512(int64_t n, const void* w, const void* x) {
    float out;
    dot_iq4_xs<1>(n, w, &x, &out);
    return out;
}

void dot_iq4_xs_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out) { dot_iq4_xs<4>(n, w, x, out); }

}  // namespace ember::tensor

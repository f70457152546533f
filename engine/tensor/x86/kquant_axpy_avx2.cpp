// The K-quant row axpys (tensor/kquant_axpy.h) with AVX2: eight values per register, the
// reference's arithmetic in the same order, so bit for bit its results.
#include <immintrin.h>

#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

// Eight byte quants from the low half of `bytes`, as floats.
inline __m256 u8x8_to_f32(__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)); }

// y[0, 32) = fma(s, q, y − m) for 32 byte quants q.
inline void add_32(__m256i q, float s, float m, float* y) {
    const __m256 vs = _mm256_set1_ps(s), vm = _mm256_set1_ps(m);
    const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
    const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
    for (int k = 0; k < 4; ++k)
        _mm256_storeu_ps(y + 8 * k, _mm256_fmadd_ps(vs, u8x8_to_f32(parts[k]), _mm256_sub_ps(_mm256_loadu_ps(y + 8 * k), vm)));
}

// y[0, 16) = fma(s, q − 32, y) for 16 byte quants q (q − 32 is exact as a float either way).
inline void add_16_centered(__m128i q, float s, float* y) {
    const __m256 vs = _mm256_set1_ps(s), centre = _mm256_set1_ps(32.0f);
    const __m128i parts[2] = {q, _mm_srli_si128(q, 8)};
    for (int k = 0; k < 2; ++k)
        _mm256_storeu_ps(y + 8 * k, _mm256_fmadd_ps(vs, _mm256_sub_ps(u8x8_to_f32(parts[k]), centre), _mm256_loadu_ps(y + 8 * k)));
}

template <typename Block, bool kFifthBit>
void axpy_k_with_mins(int64_t n, float a, const void* xv, float* y) {
    const auto* x = static_cast<const Block*>(xv);
    const __m256i low = _mm256_set1_epi8(0x0F), bit4 = _mm256_set1_epi8(0x10);
    for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K) {
        uint8_t sm[16];
        k_scales_and_mins(x[b].scales, sm);
        const float d = half(x[b].d), dmin = half(x[b].dmin);
        for (int p = 0; p < 4; ++p) {
            const __m256i bytes = load(x[b].qs + 32 * p);
            __m256i q[2] = {_mm256_and_si256(bytes, low), _mm256_and_si256(_mm256_srli_epi16(bytes, 4), low)};
            for (int h = 0; h < 2; ++h) {
                const int j = 2 * p + h;
                if constexpr (kFifthBit) {
                    // Bit j of each qh byte to bit 4.
                    const __m256i qh = load(x[b].qh);
                    q[h] = _mm256_or_si256(q[h], _mm256_and_si256(_mm256_slli_epi16(_mm256_srli_epi16(qh, j), 4), bit4));
                }
                add_32(q[h], a * (d * float(sm[j])), a * (dmin * float(sm[8 + j])), y + 32 * j);
            }
        }
    }
}

}  // namespace

void axpy_q4_k_avx2(int64_t n, float a, const void* x, float* y) { axpy_k_with_mins<BlockQ4_K, false>(n, a, x, y); }
void axpy_q5_k_avx2(int64_t n, float a, const void* x, float* y) { axpy_k_with_mins<BlockQ5_K, true>(n, a, x, y); }

void axpy_q6_k_avx2(int64_t n, float a, const void* xv, float* y) {
    const auto* x = static_cast<const BlockQ6_K*>(xv);
    const __m256i low = _mm256_set1_epi8(0x0F), two_bits = _mm256_set1_epi8(0x30);
    for (int64_t b = 0; b < n / kQK_K; ++b) {
        const float d = half(x[b].d);
        float* yh = y + b * kQK_K;
        for (int half = 0; half < 2; ++half, yh += 128) {
            const __m256i ql0 = load(x[b].ql + 64 * half), ql1 = load(x[b].ql + 64 * half + 32);
            const __m256i qh = load(x[b].qh + 32 * half);
            const int8_t* sc = x[b].scales + 8 * half;
            const __m256i q[4] = {
                _mm256_or_si256(_mm256_and_si256(ql0, low), _mm256_and_si256(_mm256_slli_epi16(qh, 4), two_bits)),
                _mm256_or_si256(_mm256_and_si256(ql1, low), _mm256_and_si256(_mm256_slli_epi16(qh, 2), two_bits)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), low), _mm256_and_si256(qh, two_bits)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), low),
                                _mm256_and_si256(_mm256_srli_epi16(qh, 2), two_bits)),
            };
            // Each run of 32 values has a scale per 16.
            for (int k = 0; k < 4; ++k) {
                add_16_centered(_mm256_castsi256_si128(q[k]), a * (d * float(sc[2 * k])), yh + 32 * k);
                add_16_centered(_mm256_extracti128_si256(q[k], 1), a * (d * float(sc[2 * k + 1])), yh + 32 * k + 16);
            }
        }
    }
}

}  // namespace ember::tensor

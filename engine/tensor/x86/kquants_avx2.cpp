// AVX2 dot products of the K-quants most files carry (Q4_K, Q5_K, Q6_K: every tensor of a
// Q4_K_M or Q5_K_M file) with Q8_K activations. Each block's integer sums are exact, as the
// scalar twins' (tensor/quant_dots_ref.cpp): weight quants stay unsigned for maddubs, and Q6_K's
// offset of 32 comes off through the activation's group sums.
#include <immintrin.h>

#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"

namespace ember::tensor {
namespace {

inline int hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Σ u·x over 32 unsigned weight quants (< 64) and 32 activations, each 16-element half
// weighted by its own scale, into 8 int32 lanes.
inline __m256i scaled_dot(__m256i u, __m256i x, int scale_lo, int scale_hi) {
    const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(int16_t(scale_hi)), _mm_set1_epi16(int16_t(scale_lo)));
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), scales);
}

// Q4_K and Q5_K: sub-block j's scale weights Σ q·x, its minimum the activation's sum.
template <typename Block, bool kFifthBit>
float dot_k_with_mins(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const Block*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int sc[8], m[8];
        for (int j = 0; j < 8; ++j) k_scale_min(j, w[i].scales, sc[j], m[j]);
        __m256i acc = _mm256_setzero_si256();
        __m256i high = _mm256_setzero_si256();
        if constexpr (kFifthBit) high = load(w[i].qh);
        for (int p = 0; p < 4; ++p) {
            const __m256i q = load(w[i].qs + 32 * p);
            __m256i lo = _mm256_and_si256(q, nibble);
            __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble);
            if constexpr (kFifthBit) {
                // Bit 2p of qh[l] for the low sub-block, bit 2p + 1 for the high one, moved to bit 4.
                const __m256i one = _mm256_set1_epi8(1);
                lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 2 * p), one), 4));
                hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(high, 2 * p + 1), one), 4));
            }
            acc = _mm256_add_epi32(acc, scaled_dot(lo, load(x[i].qs + 64 * p), sc[2 * p], sc[2 * p]));
            acc = _mm256_add_epi32(acc, scaled_dot(hi, load(x[i].qs + 64 * p + 32), sc[2 * p + 1], sc[2 * p + 1]));
        }
        int msum = 0;
        for (int j = 0; j < 8; ++j) msum += m[j] * (x[i].bsums[2 * j] + x[i].bsums[2 * j + 1]);
        sum += fp16_to_f32(w[i].d) * x[i].d * float(hsum_i32(acc));
        sum -= fp16_to_f32(w[i].dmin) * x[i].d * float(msum);
    }
    return sum;
}

}  // namespace

float dot_q4_k_q8_k_avx2(int64_t n, const void* w, const void* x) { return dot_k_with_mins<BlockQ4_K, false>(n, w, x); }
float dot_q5_k_q8_k_avx2(int64_t n, const void* w, const void* x) { return dot_k_with_mins<BlockQ5_K, true>(n, w, x); }

float dot_q6_k_q8_k_avx2(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ6_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const __m256i nibble = _mm256_set1_epi8(0x0F), two_bits = _mm256_set1_epi8(0x03);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const int8_t* sc = w[i].scales;
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            const uint8_t* ql = w[i].ql + 64 * h;
            const __m256i qh = load(w[i].qh + 32 * h);
            const __m256i ql0 = load(ql), ql1 = load(ql + 32);
            const auto high = [&](int shift) {
                return _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, shift), two_bits), 4);
            };
            const __m256i u[4] = {
                _mm256_or_si256(_mm256_and_si256(ql0, nibble), high(0)),
                _mm256_or_si256(_mm256_and_si256(ql1, nibble), high(2)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), nibble), high(4)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), nibble), high(6)),
            };
            for (int c = 0; c < 4; ++c) {
                const int g = 8 * h + 2 * c;
                acc = _mm256_add_epi32(acc, scaled_dot(u[c], load(x[i].qs + 128 * h + 32 * c), sc[g], sc[g + 1]));
            }
        }
        int offset = 0;
        for (int g = 0; g < 16; ++g) offset += sc[g] * x[i].bsums[g];
        sum += fp16_to_f32(w[i].d) * x[i].d * float(hsum_i32(acc) - 32 * offset);
    }
    return sum;
}

}  // namespace ember::tensor

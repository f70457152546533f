// AVX2 dot products of the K-quants most files carry (Q4_K, Q5_K, Q6_K: every tensor of a
// Q4_K_M or Q5_K_M file) with Q8_K activations. Each block's integer sums are exact, as the
// scalar twins' (tensor/quant_dots_ref.cpp): weight quants stay unsigned for maddubs, and Q6_K's
// offset of 32 comes off through the activation's group sums. Only the order of the float sums
// differs from the scalar kernels.
#include <immintrin.h>

#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

// Σ u·x over 32 unsigned weight quants (< 64) and 32 activations, each 16-element half
// weighted by its own scale, into 8 int32 lanes.
inline __m256i scaled_dot(__m256i u, __m256i x, int scale_lo, int scale_hi) {
    const __m256i scales = _mm256_set_m128i(_mm_set1_epi16(int16_t(scale_hi)), _mm_set1_epi16(int16_t(scale_lo)));
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), scales);
}

// The eight scales (bytes 0-7) and minimums (bytes 8-15) of a Q4_K/Q5_K block.
inline __m128i scales_and_mins_vector(const uint8_t* packed) {
    alignas(16) uint8_t bytes[16];
    ember::tensor::k_scales_and_mins(packed, bytes);
    return _mm_load_si128(reinterpret_cast<const __m128i*>(bytes));
}

// Q4_K and Q5_K against kTokens activations at once: sub-block j's scale weights Σ q·x, its
// minimum the activation's sum. Each weight block is unpacked once for all the tokens (a batch
// reads every row once per kTokens tokens); the scales are spread to 16-bit lanes once per
// block; each block's integer sum meets its float scale in one multiply-add, summed across
// blocks in a vector.
template <typename Block, bool kFifthBit, int kTokens>
void dot_k_with_mins(int64_t n, const void* wv, const void* const* xv, float* out) {
    auto* w = static_cast<const Block*>(wv);
    const BlockQ8_K* x[kTokens];
    for (int t = 0; t < kTokens; ++t) x[t] = static_cast<const BlockQ8_K*>(xv[t]);
    const __m256i nibble = _mm256_set1_epi8(0x0F);
    __m256 acc[kTokens];
    __m128 acc_min[kTokens];
    for (int t = 0; t < kTokens; ++t) {
        acc[t] = _mm256_setzero_ps();
        acc_min[t] = _mm_setzero_ps();
    }
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const __m128i scales_mins = scales_and_mins_vector(w[i].scales);
        const __m128i mins = _mm_cvtepu8_epi16(_mm_unpackhi_epi64(scales_mins, scales_mins));
        // The eight scales as 16-bit lanes in both 128-bit halves, for in-lane shuffles that
        // spread scale j to every lane.
        const __m256i scales16 = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(scales_mins));
        const float d = fp16_to_f32(w[i].d), dmin = fp16_to_f32(w[i].dmin);
        __m256i high = _mm256_setzero_si256();
        if constexpr (kFifthBit) high = load(w[i].qh);
        __m256i sumi[kTokens];
        for (int t = 0; t < kTokens; ++t) sumi[t] = _mm256_setzero_si256();
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
            const __m256i s_lo = _mm256_shuffle_epi8(scales16, _mm256_set1_epi16(int16_t(0x0100 + 0x0202 * (2 * p))));
            const __m256i s_hi = _mm256_shuffle_epi8(scales16, _mm256_set1_epi16(int16_t(0x0100 + 0x0202 * (2 * p + 1))));
            for (int t = 0; t < kTokens; ++t) {
                const __m256i p_lo = _mm256_maddubs_epi16(lo, load(x[t][i].qs + 64 * p));
                const __m256i p_hi = _mm256_maddubs_epi16(hi, load(x[t][i].qs + 64 * p + 32));
                sumi[t] = _mm256_add_epi32(sumi[t], _mm256_add_epi32(_mm256_madd_epi16(p_lo, s_lo), _mm256_madd_epi16(p_hi, s_hi)));
            }
        }
        for (int t = 0; t < kTokens; ++t) {
            const float dx = x[t][i].d;
            // Σ min_j · (bsum_2j + bsum_2j+1): the bsum pairs against the eight minimums.
            const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t][i].bsums));
            const __m128i pair_sums = _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
            acc_min[t] = _mm_fmadd_ps(_mm_set1_ps(dmin * dx), _mm_cvtepi32_ps(_mm_madd_epi16(mins, pair_sums)), acc_min[t]);
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(d * dx), _mm256_cvtepi32_ps(sumi[t]), acc[t]);
        }
    }
    for (int t = 0; t < kTokens; ++t) {
        __m128 m = _mm_add_ps(acc_min[t], _mm_movehl_ps(acc_min[t], acc_min[t]));
        m = _mm_add_ss(m, _mm_movehdup_ps(m));
        out[t] = hsum(acc[t]) - _mm_cvtss_f32(m);
    }
}

template <typename Block, bool kFifthBit>
float dot_k_with_mins_one(int64_t n, const void* w, const void* x) {
    float out;
    dot_k_with_mins<Block, kFifthBit, 1>(n, w, &x, &out);
    return out;
}

}  // namespace

float dot_q4_k_q8_k_avx2(int64_t n, const void* w, const void* x) { return dot_k_with_mins_one<BlockQ4_K, false>(n, w, x); }
float dot_q5_k_q8_k_avx2(int64_t n, const void* w, const void* x) { return dot_k_with_mins_one<BlockQ5_K, true>(n, w, x); }
void dot_q4_k_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) {
    dot_k_with_mins<BlockQ4_K, false, 4>(n, w, x, out);
}
void dot_q5_k_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out) {
    dot_k_with_mins<BlockQ5_K, true, 4>(n, w, x, out);
}

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

// AVX2 product of a Q6_K_R8 group (tensor/grouped_rows.h) with Q8_K activation rows: the AVX-512
// kernel's arithmetic (q6_k_r8_avx512.cpp) on the halves of q4_k_r8_avx2.cpp, rows 0-3 then
// rows 4-7, lanes 2r' and 2r' + 1 of each for its row r'. The 6-bit quants are put together from
// ql and qh bytes in the vector, maddubs pairs their products exactly (|q·x| ≤ 63·128) and madd
// weights each pair by its row's 16-element scale; the +32 comes off per row as
// 32 · Σ scale_g · bsum_g. Only the order of the float sums differs from dot_q6_k_q8_k.
#include <immintrin.h>

#include "tensor/grouped_rows.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/r8_halves_avx2.h"

namespace ember::tensor {
namespace {

// A pshufb index over eight bytes of one group's scales (byte r: row r's): byte i of the result
// takes row 4h + i / 4's, so that the widened int16 i sits in its row's lanes.
inline __m128i group_index(int h) {
    alignas(16) int8_t idx[16];
    for (int i = 0; i < 16; ++i) idx[i] = int8_t(4 * h + i / 4);
    return _mm_load_si128(reinterpret_cast<const __m128i*>(idx));
}

// For the +32 term, over 16 bytes of two groups' scales (4k + 2s and 4k + 2s + 1 for s = 0, 1):
// byte i = 2(2r' + h') + e of the result takes group 4k + 2h' + e of row 4h + r' where h' = s,
// else zero, so two shuffles or'ed cover a row's four groups 4k..4k+3 over its two lanes.
inline __m128i offset_index(int h, int s) {
    alignas(16) int8_t idx[16];
    for (int i = 0; i < 16; ++i) {
        const int r = i / 4, hh = (i / 2) % 2, e = i % 2;
        idx[i] = hh == s ? int8_t(8 * e + 4 * h + r) : int8_t(-128);
    }
    return _mm_load_si128(reinterpret_cast<const __m128i*>(idx));
}

// Scale g of rows 4h..4h + 3 as int16, four copies per row.
inline __m256i group_scale(const uint8_t* scales, int g, __m128i index) {
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(scales + 8 * g)), index));
}

inline __m256i bits45(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x30)); }
inline __m256i low4(__m256i v) { return _mm256_and_si256(v, _mm256_set1_epi8(0x0F)); }

template <int h>
struct Q6_KHalf {
    static constexpr size_t kUnitBytes = kQ6_KR8UnitBytes;
    static constexpr int64_t kUnitElements = kQK_K;

    explicit Q6_KHalf(int64_t) {}

    template <int T>
    void add(const uint8_t* unit, int64_t i, const uint8_t* x, size_t x_stride, __m256* out) const {
        const __m256i pairs = h ? _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7) : _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
        const __m128i index = group_index(h), offsets[2] = {offset_index(h, 0), offset_index(h, 1)};
        const uint8_t* scales = unit + kQ6_KR8Scales;
        const __m256 d = _mm256_permutevar8x32_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(unit))), pairs);
        const BlockQ8_K* xb[T];
        __m256i sum[T];
        for (int t = 0; t < T; ++t) {
            xb[t] = reinterpret_cast<const BlockQ8_K*>(x + size_t(t) * x_stride) + i;
            sum[t] = _mm256_setzero_si256();
        }
        // Element 128q + 32m + 8c + b of a row: ql chunk 8q + c (m = 0, 2) or 8q + 4 + c (m = 1, 3),
        // low nibble for m < 2; qh chunk 4q + c, bits 2m and 2m + 1; scale 8q + 2m + c / 2.
        // Unrolled so that offsets and scale indices are constants: inlined into both drivers, the
        // loops are otherwise kept, and the counters and scales spill.
#pragma GCC unroll 2
        for (int q = 0; q < 2; ++q)
#pragma GCC unroll 4
            for (int c = 0; c < 4; ++c) {
                const auto chunk = [&](size_t at, int k) {
                    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + at + 64 * k + 32 * h));
                };
                const __m256i a = chunk(kQ6_KR8Low, 8 * q + c), b = chunk(kQ6_KR8Low, 8 * q + 4 + c), hb = chunk(kQ6_KR8High, 4 * q + c);
                const __m256i u[4] = {
                    _mm256_or_si256(low4(a), bits45(_mm256_slli_epi16(hb, 4))),
                    _mm256_or_si256(low4(b), bits45(_mm256_slli_epi16(hb, 2))),
                    _mm256_or_si256(low4(_mm256_srli_epi16(a, 4)), bits45(hb)),
                    _mm256_or_si256(low4(_mm256_srli_epi16(b, 4)), bits45(_mm256_srli_epi16(hb, 2))),
                };
                __m256i scale[4];
                for (int m = 0; m < 4; ++m) scale[m] = group_scale(scales, 8 * q + 2 * m + c / 2, index);
                for (int t = 0; t < T; ++t) {
                    const int8_t* xq = xb[t]->qs + 128 * q + 8 * c;
                    for (int m = 0; m < 4; ++m)
                        sum[t] = _mm256_add_epi32(
                            sum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(u[m], r8_avx2::broadcast8(xq + 32 * m)), scale[m]));
                }
            }
        __m256i offset_scale[4];
        for (int k = 0; k < 4; ++k) {
            const __m128i groups01 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + 32 * k));
            const __m128i groups23 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales + 32 * k + 16));
            offset_scale[k] = _mm256_cvtepi8_epi16(_mm_or_si128(_mm_shuffle_epi8(groups01, offsets[0]), _mm_shuffle_epi8(groups23, offsets[1])));
        }
        for (int t = 0; t < T; ++t) {
            __m256i offset = _mm256_setzero_si256();
            for (int k = 0; k < 4; ++k)
                offset = _mm256_add_epi32(offset, _mm256_madd_epi16(offset_scale[k], r8_avx2::broadcast8(xb[t]->bsums + 4 * k)));
            sum[t] = _mm256_sub_epi32(sum[t], _mm256_slli_epi32(offset, 5));
            out[t] = _mm256_fmadd_ps(_mm256_mul_ps(d, _mm256_set1_ps(xb[t]->d)), _mm256_cvtepi32_ps(sum[t]), out[t]);
        }
    }
};

}  // namespace

void gemm_q6_k_r8_q8_k_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride) {
    r8_avx2::gemm_by_halves<Q6_KHalf>(n, group, x, x_stride, n_tokens, y, y_stride);
}

void gemv4_q6_k_r8_q8_k_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    r8_avx2::gemv4_by_halves<Q6_KHalf>(n, groups, x, y, prefetch);
}

}  // namespace ember::tensor

// AVX2 product of a Q4_K_R8 or Q5_K_R8 group (tensor/grouped_rows.h) with Q8_K activation rows.
// As for Q4_0_R8 on AVX2, a unit's 64-byte words are read as rows 0-3 and rows 4-7, one half
// after the other, lanes 2r and 2r + 1 of each for its row r. A super-block stays in integers:
// maddubs sums a sub-block's products exactly in 16 bits (4 · 2 · 31 · 128 < 2^15 even with
// Q5_K's fifth bit or'ed into the nibbles), madd weights them by the row's 6-bit scale, and the
// minimums meet the activation's sub-block sums in two more madds. Only d and dmin are floats,
// once per super-block and token. Only the order of the float sums differs from
// dot_q4_k_q8_k_ref and dot_q5_k_q8_k_ref.
#include <immintrin.h>

#include "tensor/grouped_rows.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/r8_halves_avx2.h"

namespace ember::tensor {
namespace {

// A pshufb index that puts byte `first + i / 4` of a 128-bit lane into int16 i of the result's
// low lane (i < 8) and byte `first + 2 + (i - 8) / 4` into the high lane's, zero-extended: rows
// r' = i / 4 of a half, each in its two lanes, when `first` is 8 · (j % 2) + 4h.
inline __m256i row_bytes_index(int first) {
    alignas(32) int8_t idx[32];
    for (int k = 0; k < 32; ++k) idx[k] = k % 2 ? int8_t(-128) : int8_t(first + (k / 2) / 4);
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
}

// The same for the minimums: int16 i = 2(2r' + h') + e takes minimum j = 2h' + e of row r', from
// lane 0 (j < 2, `from_lane` 0) or lane 1 (j >= 2, 1) of the source; the other lane's bytes zero.
inline __m256i min_index(int h, int from_lane) {
    alignas(32) int8_t idx[32];
    for (int k = 0; k < 32; ++k) {
        const int i = k / 2, r = (k / 16) * 2 + (i % 8) / 4, j = i % 4;
        idx[k] = k % 2 || j / 2 != from_lane ? int8_t(-128) : int8_t(8 * (j % 2) + 4 * h + r);
    }
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
}

// Both 128-bit lanes of v set to its lane `high` (0 or 1), with the immediate a literal as an
// unoptimised build needs it.
inline __m256i both_lanes(__m256i v, int high) {
    return high ? _mm256_permute2x128_si256(v, v, 0x11) : _mm256_permute2x128_si256(v, v, 0x00);
}

// One half's scales (scale[j], j < 8) and minimums (min[0]: j < 4, min[1]: j >= 4) as int16
// for madd, and d and dmin in lanes 2r', 2r' + 1.
struct HalfScales {
    __m256i scale[8];
    __m256i min[2];
    __m256 d, dmin;
};

inline void half_scales(const uint8_t* unit, int h, HalfScales& s) {
    const __m256i pairs = h ? _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7) : _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    s.d = _mm256_permutevar8x32_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(unit))), pairs);
    s.dmin = _mm256_permutevar8x32_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(unit + 16))), pairs);
    // Byte 8j' + r of each: scale or minimum j' (first four) or 4 + j' (last four) of row r.
    const __m256i low0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 32));
    const __m256i low1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 64));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 96));
    const __m256i nibble = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
    const auto join = [&](__m256i low, __m256i high_bits) { return _mm256_or_si256(_mm256_and_si256(low, nibble), _mm256_and_si256(high_bits, bits45)); };
    const __m256i sc[2] = {join(low0, _mm256_slli_epi16(high, 4)), join(low1, _mm256_slli_epi16(high, 2))};
    const __m256i m[2] = {join(_mm256_srli_epi16(low0, 4), high), join(_mm256_srli_epi16(low1, 4), _mm256_srli_epi16(high, 2))};
    const __m256i index[2] = {row_bytes_index(4 * h), row_bytes_index(8 + 4 * h)};
    for (int j = 0; j < 8; ++j) {
        // Scale j sits in 128-bit lane (j % 4) / 2 of sc[j / 4]: both lanes take that one.
        s.scale[j] = _mm256_shuffle_epi8(both_lanes(sc[j / 4], (j % 4) / 2), index[j % 2]);
    }
    const __m256i from0 = min_index(h, 0), from1 = min_index(h, 1);
    for (int k = 0; k < 2; ++k)
        s.min[k] = _mm256_or_si256(_mm256_shuffle_epi8(both_lanes(m[k], 0), from0), _mm256_shuffle_epi8(both_lanes(m[k], 1), from1));
}

template <int h, bool kFifth>
struct KHalf {
    static constexpr size_t kUnitBytes = kFifth ? kQ5_KR8UnitBytes : kQ4_KR8UnitBytes;
    static constexpr int64_t kUnitElements = kQK_K;

    explicit KHalf(int64_t) {}

    template <int T>
    void add(const uint8_t* unit, int64_t i, const uint8_t* x, size_t x_stride, __m256* out) const {
        const __m256i nibble = _mm256_set1_epi8(0x0F), fifth = _mm256_set1_epi8(0x10);
        HalfScales s;
        half_scales(unit, h, s);
        const BlockQ8_K* xb[T];
        __m256i sum[T];
        for (int t = 0; t < T; ++t) {
            xb[t] = reinterpret_cast<const BlockQ8_K*>(x + size_t(t) * x_stride) + i;
            sum[t] = _mm256_setzero_si256();
        }
        // Q5_K: the fifth bits of sub-block pair p are bits 2p (low nibbles) and 2p + 1 (high) of
        // the qh chunk with the same bytes, so each pair takes bits 0 and 1 and shifts the rest down.
        __m256i high[4];
        if constexpr (kFifth)
            for (int c = 0; c < 4; ++c) high[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + kQ5_KR8High + 64 * c + 32 * h));
        for (int p = 0; p < 4; ++p) {
            __m256i lo[4], hi[4];
            for (int c = 0; c < 4; ++c) {
                const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 128 + 256 * p + 64 * c + 32 * h));
                lo[c] = _mm256_and_si256(q, nibble);
                hi[c] = _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble);
                if constexpr (kFifth) {
                    lo[c] = _mm256_or_si256(lo[c], _mm256_and_si256(_mm256_slli_epi16(high[c], 4), fifth));
                    hi[c] = _mm256_or_si256(hi[c], _mm256_and_si256(_mm256_slli_epi16(high[c], 3), fifth));
                    high[c] = _mm256_srli_epi16(high[c], 2);
                }
            }
            for (int t = 0; t < T; ++t) {
                const int8_t* xq = xb[t]->qs + 64 * p;
                __m256i a = _mm256_maddubs_epi16(lo[0], r8_avx2::broadcast8(xq)), b = _mm256_maddubs_epi16(hi[0], r8_avx2::broadcast8(xq + 32));
                for (int c = 1; c < 4; ++c) {
                    a = _mm256_add_epi16(a, _mm256_maddubs_epi16(lo[c], r8_avx2::broadcast8(xq + 8 * c)));
                    b = _mm256_add_epi16(b, _mm256_maddubs_epi16(hi[c], r8_avx2::broadcast8(xq + 32 + 8 * c)));
                }
                sum[t] = _mm256_add_epi32(sum[t], _mm256_add_epi32(_mm256_madd_epi16(a, s.scale[2 * p]), _mm256_madd_epi16(b, s.scale[2 * p + 1])));
            }
        }
        for (int t = 0; t < T; ++t) {
            // Sub-block j's activation sum (bsums 2j + 2j + 1) as int16, four at a time, repeated
            // every 64 bits to meet min[0] and min[1].
            const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[t]->bsums));
            const __m256i sums32 = _mm256_madd_epi16(bsums, _mm256_set1_epi16(1));
            const __m128i sums16 = _mm_packs_epi32(_mm256_castsi256_si128(sums32), _mm256_extracti128_si256(sums32, 1));
            const __m256i s03 = _mm256_broadcastq_epi64(sums16), s47 = _mm256_broadcastq_epi64(_mm_unpackhi_epi64(sums16, sums16));
            const __m256i mins = _mm256_add_epi32(_mm256_madd_epi16(s.min[0], s03), _mm256_madd_epi16(s.min[1], s47));
            const __m256 block = _mm256_fmsub_ps(s.d, _mm256_cvtepi32_ps(sum[t]), _mm256_mul_ps(s.dmin, _mm256_cvtepi32_ps(mins)));
            out[t] = _mm256_fmadd_ps(block, _mm256_set1_ps(xb[t]->d), out[t]);
        }
    }
};

template <int h>
using Q4_KHalf = KHalf<h, false>;
template <int h>
using Q5_KHalf = KHalf<h, true>;

}  // namespace

void gemm_q4_k_r8_q8_k_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride) {
    r8_avx2::gemm_by_halves<Q4_KHalf>(n, group, x, x_stride, n_tokens, y, y_stride);
}

void gemm_q5_k_r8_q8_k_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride) {
    r8_avx2::gemm_by_halves<Q5_KHalf>(n, group, x, x_stride, n_tokens, y, y_stride);
}

void gemv4_q4_k_r8_q8_k_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    r8_avx2::gemv4_by_halves<Q4_KHalf>(n, groups, x, y, prefetch);
}

void gemv4_q5_k_r8_q8_k_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    r8_avx2::gemv4_by_halves<Q5_KHalf>(n, groups, x, y, prefetch);
}

}  // namespace ember::tensor

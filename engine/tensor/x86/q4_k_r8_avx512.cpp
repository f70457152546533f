// AVX-512 VNNI product of a Q4_K_R8 or Q5_K_R8 group (tensor/grouped_rows.h) with Q8_K
// activation rows. Lanes 2r and 2r + 1 of every vector belong to row r: a 64-byte load of the
// group's quants holds eight bytes of each row, and an eight-byte activation broadcast lines up
// with them, so one vpdpbusd does four products in each of sixteen lanes for eight rows at once.
// A super-block stays in integers: each sub-block's sum meets its 6-bit scale, and the
// activation sums their minimums, in vpdpwssd, with the scales unpacked once per super-block for
// every token of a tile (eight, then four, then the rest). Only d and dmin are floats, once per
// super-block and token; the two lanes of a row are added at the end. Q5_K's units are Q4_K's
// with the fifth bits after them, or'ed into the nibbles. Only the order of the float sums
// differs from dot_q4_k_q8_k_ref and dot_q5_k_q8_k_ref.
#include <immintrin.h>

#include "tensor/grouped_rows.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/r8_lanes.h"

namespace ember::tensor {
namespace {

// One unit's scales and minimums as int16 pairs for vpdpwssd, and its d and dmin as floats, each
// in lanes 2r and 2r + 1 (row r). For Q4_K, scale[p] (p < 4) pairs sub-blocks 2p and 2p + 1 in
// every lane; for Q5_K, scale[j] (j < 8) holds sub-block j's twice. min[0] pairs minimums 2h,
// 2h + 1 and min[1] minimums 4 + 2h, 5 + 2h in lane 2r + h, so a row's two lanes together hold
// its eight minimums once.
struct UnitScales {
    __m512i scale[8];
    __m512i min[2];
    __m512 d;
    __m512 dmin;
};

// vpermb orders for the unpacked scale and minimum bytes, where byte 8j + r is row r's j. Int16
// i = 2(2r + h) + e (lane 2r + h, pair element e) takes scale 2p + e, for p = p0 in the low half
// and p0 + 1 in the high half (minimums take r8::lane_pair_order).
inline __m512i scale_order(int p0) {
    alignas(64) uint8_t idx[64];
    for (int k = 0; k < 64; ++k) {
        const int i = k % 32, p = p0 + k / 32;
        idx[k] = uint8_t(16 * p + 8 * (i % 2) + i / 4);
    }
    return _mm512_load_si512(idx);
}
// The same with both elements of every pair taking scale j, for j = j0 in the low half and j0 + 1
// in the high half.
inline __m512i repeated_scale_order(int j0) {
    alignas(64) uint8_t idx[64];
    for (int k = 0; k < 64; ++k) idx[k] = uint8_t(8 * (j0 + k / 32) + (k % 32) / 4);
    return _mm512_load_si512(idx);
}

// Q4_K takes two scale orders (four pairs of sub-blocks), Q5_K four (eight sub-blocks).
template <bool kFifth>
struct Orders {
    static constexpr int kScaleOrders = kFifth ? 4 : 2;
    __m512i scale[kScaleOrders];
    __m512i min = r8::lane_pair_order();
    Orders() {
        for (int k = 0; k < kScaleOrders; ++k) scale[k] = kFifth ? repeated_scale_order(2 * k) : scale_order(2 * k);
    }
};

template <bool kFifth>
inline void unit_scales(const uint8_t* unit, const Orders<kFifth>& order, UnitScales& s) {
    s.d = r8::row_pairs(unit);
    s.dmin = r8::row_pairs(unit + 16);
    // Byte 8j + r of both: scale or minimum j of row r. The high-bit bytes (8k + r, k < 4) are
    // read twice: j < 4 takes bits from shift 0 (scale) and 4 (minimum), j >= 4 from 2 and 6.
    const __m512i low = _mm512_loadu_si512(unit + 32);
    const __m512i high = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 96)));
    const __m512i shift = _mm512_set_epi64(2, 2, 2, 2, 0, 0, 0, 0);
    const __m512i nibble = _mm512_set1_epi8(0x0F), two_bits = _mm512_set1_epi8(0x03);
    const auto high_bits = [&](int extra) {
        const __m512i bits = _mm512_srlv_epi64(high, _mm512_add_epi64(shift, _mm512_set1_epi64(extra)));
        return _mm512_slli_epi64(_mm512_and_si512(bits, two_bits), 4);
    };
    const __m512i sc = _mm512_or_si512(_mm512_and_si512(low, nibble), high_bits(0));
    const __m512i m = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi64(low, 4), nibble), high_bits(4));
    const auto widen = [](__m512i bytes, int half) {
        return _mm512_cvtepu8_epi16(half ? _mm512_extracti64x4_epi64(bytes, 1) : _mm512_castsi512_si256(bytes));
    };
    for (int k = 0; k < Orders<kFifth>::kScaleOrders; ++k) {
        const __m512i ordered = _mm512_permutexvar_epi8(order.scale[k], sc);
        s.scale[2 * k] = widen(ordered, 0);
        s.scale[2 * k + 1] = widen(ordered, 1);
    }
    const __m512i mins = _mm512_permutexvar_epi8(order.min, m);
    s.min[0] = widen(mins, 0);
    s.min[1] = widen(mins, 1);
}

// Two int32 sums that fit int16, as the low and high int16 of each lane.
inline __m512i pair16(__m512i low, __m512i high) { return _mm512_mask_blend_epi16(0xAAAAAAAA, low, _mm512_slli_epi32(high, 16)); }

// One unit's products with T tokens' Q8_K blocks, added to acc.
template <int T, bool kFifth>
inline void unit_tile(const uint8_t* unit, const BlockQ8_K* const (&xb)[T], const Orders<kFifth>& order, __m512 (&acc)[T]) {
    const __m512i nibble = _mm512_set1_epi8(0x0F), fifth = _mm512_set1_epi8(0x10);
    UnitScales s;
    unit_scales(unit, order, s);
    __m512i sum[T];
    for (int t = 0; t < T; ++t) sum[t] = _mm512_setzero_si512();
    // Q5_K: the fifth bits of sub-block pair p are bits 2p (low nibbles) and 2p + 1 (high) of
    // the qh chunk with the same bytes, so each pair takes bits 0 and 1 and shifts the rest down.
    __m512i high[4];
    if constexpr (kFifth)
        for (int c = 0; c < 4; ++c) high[c] = _mm512_loadu_si512(unit + kQ5_KR8High + 64 * c);
    for (int p = 0; p < 4; ++p) {
        __m512i lo[4], hi[4];
        for (int c = 0; c < 4; ++c) {
            const __m512i q = _mm512_loadu_si512(unit + 128 + 256 * p + 64 * c);
            lo[c] = _mm512_and_si512(q, nibble);
            hi[c] = _mm512_and_si512(_mm512_srli_epi64(q, 4), nibble);
            if constexpr (kFifth) {
                // lo | (bits & 0x10), with the bit moved to bit 4.
                lo[c] = _mm512_ternarylogic_epi32(lo[c], _mm512_slli_epi16(high[c], 4), fifth, 0xF8);
                hi[c] = _mm512_ternarylogic_epi32(hi[c], _mm512_slli_epi16(high[c], 3), fifth, 0xF8);
                high[c] = _mm512_srli_epi16(high[c], 2);
            }
        }
        for (int t = 0; t < T; ++t) {
            const int8_t* xq = xb[t]->qs + 64 * p;
            if constexpr (kFifth) {
                // Eight products of a five-bit quant and an int8 fit int16 (8 * 31 * 128 < 2^15),
                // sixteen do not: a sub-block's two halves pair up and meet its scale.
                __m512i a[2], b[2];
                for (int h = 0; h < 2; ++h) {
                    a[h] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[2 * h], r8::broadcast8(xq + 16 * h)),
                                               lo[2 * h + 1], r8::broadcast8(xq + 16 * h + 8));
                    b[h] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), hi[2 * h], r8::broadcast8(xq + 32 + 16 * h)),
                                               hi[2 * h + 1], r8::broadcast8(xq + 40 + 16 * h));
                }
                sum[t] = _mm512_dpwssd_epi32(sum[t], pair16(a[0], a[1]), s.scale[2 * p]);
                sum[t] = _mm512_dpwssd_epi32(sum[t], pair16(b[0], b[1]), s.scale[2 * p + 1]);
            } else {
                __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
                for (int c = 0; c < 4; ++c) {
                    a = _mm512_dpbusd_epi32(a, lo[c], r8::broadcast8(xq + 8 * c));
                    b = _mm512_dpbusd_epi32(b, hi[c], r8::broadcast8(xq + 32 + 8 * c));
                }
                // Sixteen products of a nibble and an int8 fit int16 (|a|, |b| <= 15 * 128 * 16),
                // so a and b pair up in each lane and meet their scales in one vpdpwssd.
                sum[t] = _mm512_dpwssd_epi32(sum[t], pair16(a, b), s.scale[p]);
            }
        }
    }
    for (int t = 0; t < T; ++t) {
        // Sub-block j's activation sum S_j (bsums 2j + 2j + 1), as int16: S_0..S_3 for min[0]'s
        // pairs, S_4..S_7 for min[1]'s, repeated for the eight rows.
        const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[t]->bsums));
        const __m256i sums32 = _mm256_madd_epi16(bsums, _mm256_set1_epi16(1));
        const __m128i sums16 = _mm_packs_epi32(_mm256_castsi256_si128(sums32), _mm256_extracti128_si256(sums32, 1));
        const __m512i s03 = _mm512_broadcastq_epi64(sums16), s47 = _mm512_broadcastq_epi64(_mm_unpackhi_epi64(sums16, sums16));
        const __m512i mins = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(_mm512_setzero_si512(), s.min[0], s03), s.min[1], s47);
        const __m512 block = _mm512_fmsub_ps(s.d, _mm512_cvtepi32_ps(sum[t]), _mm512_mul_ps(s.dmin, _mm512_cvtepi32_ps(mins)));
        acc[t] = _mm512_fmadd_ps(block, _mm512_set1_ps(xb[t]->d), acc[t]);
    }
}

template <int T, bool kFifth>
void gemm_tile(int64_t n, const uint8_t* group, const uint8_t* x, size_t x_stride, float* y, size_t y_stride) {
    constexpr size_t kUnitBytes = kFifth ? kQ5_KR8UnitBytes : kQ4_KR8UnitBytes;
    const Orders<kFifth> o;
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const BlockQ8_K* xb[T];
        for (int t = 0; t < T; ++t) xb[t] = reinterpret_cast<const BlockQ8_K*>(x + size_t(t) * x_stride) + i;
        unit_tile<T, kFifth>(group + size_t(i) * kUnitBytes, xb, o, acc);
    }
    r8::store_rows(acc, y, y_stride);
}

template <bool kFifth>
void gemm(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y, size_t y_stride) {
    const auto* g = static_cast<const uint8_t*>(group);
    for_each_tile<8>(n_tokens, [&](int64_t t, auto size) {
        gemm_tile<decltype(size)::value, kFifth>(n, g, x + size_t(t) * x_stride, x_stride, y + size_t(t) * y_stride, y_stride);
    });
}

template <bool kFifth>
void gemv4(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    const Orders<kFifth> o;
    r8::gemv4_by_units<kFifth ? kQ5_KR8UnitBytes : kQ4_KR8UnitBytes>(
        n, groups, x, y, prefetch,
        [&](const uint8_t* unit, const BlockQ8_K* const (&xb)[1], __m512 (&acc)[1]) { unit_tile<1, kFifth>(unit, xb, o, acc); });
}

}  // namespace

void gemm_q4_k_r8_q8_k_avx512(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride) {
    gemm<false>(n, group, x, x_stride, n_tokens, y, y_stride);
}

void gemm_q5_k_r8_q8_k_avx512(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride) {
    gemm<true>(n, group, x, x_stride, n_tokens, y, y_stride);
}

void gemv4_q4_k_r8_q8_k_avx512(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    gemv4<false>(n, groups, x, y, prefetch);
}

void gemv4_q5_k_r8_q8_k_avx512(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    gemv4<true>(n, groups, x, y, prefetch);
}

}  // namespace ember::tensor

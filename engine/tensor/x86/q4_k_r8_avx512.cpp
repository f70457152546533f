// AVX-512 VNNI product of a Q4_K_R8 group (tensor/grouped_rows.h) with Q8_K activation rows. Lanes
// 2r and 2r + 1 of every vector belong to row r: a 64-byte load of the group's quants holds eight
// bytes of each row, and an eight-byte activation broadcast lines up with them, so one vpdpbusd
// does four products in each of sixteen lanes for eight rows at once. A sub-block's integer sums
// are exact; per super-block they are weighted by float vectors of the eight rows' scales, made
// once per super-block and shared by every token of a tile (eight, then four, then the rest).
// The two lanes of a row are added at the end. Only the order of the float sums differs from
// dot_q4_k_q8_k_ref.
#include <immintrin.h>

#include <cstring>

#include "tensor/grouped_rows.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"

namespace ember::tensor {
namespace {

// One unit's float weights: d_r · scale_j(r) in lanes 2r and 2r + 1; dmin_r · min_j(r) in lane
// 2r only, as a row's two lanes are summed and its minimum's term must count once.
struct UnitScales {
    __m512 scale[8];
    __m512 min[8];
};

inline void unit_scales(const uint8_t* unit, UnitScales& s) {
    const __m512i pairs = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    const auto halves = [&](const uint8_t* fp16) {
        return _mm512_castps256_ps512(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(fp16))));
    };
    const __m512 d = _mm512_permutexvar_ps(pairs, halves(unit));
    const __m512 dmin = _mm512_maskz_permutexvar_ps(0x5555, pairs, halves(unit + 16));
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
    // Each byte twice: 128-bit lane L of the first holds j = 2L, of the second j = 2L + 1.
    alignas(64) uint8_t dup[4][64];
    _mm512_store_si512(dup[0], _mm512_unpacklo_epi8(sc, sc));
    _mm512_store_si512(dup[1], _mm512_unpackhi_epi8(sc, sc));
    _mm512_store_si512(dup[2], _mm512_unpacklo_epi8(m, m));
    _mm512_store_si512(dup[3], _mm512_unpackhi_epi8(m, m));
    const auto lanes = [&](int table, int j) {
        const __m128i bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(dup[table] + 16 * (j >> 1)));
        return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
    };
    for (int j = 0; j < 8; ++j) {
        s.scale[j] = _mm512_mul_ps(d, lanes(j & 1, j));
        s.min[j] = _mm512_mul_ps(dmin, lanes(2 + (j & 1), j));
    }
}

inline __m512i broadcast8(const int8_t* p) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return _mm512_set1_epi64(v);
}

template <int T>
void gemm_tile(int64_t n, const uint8_t* group, const uint8_t* x, size_t x_stride, float* y, size_t y_stride) {
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const uint8_t* unit = group + size_t(i) * kQ4_KR8UnitBytes;
        UnitScales s;
        unit_scales(unit, s);
        const BlockQ8_K* xb[T];
        __m512 block[T];
        for (int t = 0; t < T; ++t) {
            xb[t] = reinterpret_cast<const BlockQ8_K*>(x + size_t(t) * x_stride) + i;
            block[t] = _mm512_setzero_ps();
        }
        for (int p = 0; p < 4; ++p) {
            __m512i lo[4], hi[4];
            for (int c = 0; c < 4; ++c) {
                const __m512i q = _mm512_loadu_si512(unit + 128 + 256 * p + 64 * c);
                lo[c] = _mm512_and_si512(q, nibble);
                hi[c] = _mm512_and_si512(_mm512_srli_epi64(q, 4), nibble);
            }
            for (int t = 0; t < T; ++t) {
                const int8_t* xq = xb[t]->qs + 64 * p;
                __m512i a = _mm512_setzero_si512(), b = _mm512_setzero_si512();
                for (int c = 0; c < 4; ++c) {
                    a = _mm512_dpbusd_epi32(a, lo[c], broadcast8(xq + 8 * c));
                    b = _mm512_dpbusd_epi32(b, hi[c], broadcast8(xq + 32 + 8 * c));
                }
                block[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(a), s.scale[2 * p], block[t]);
                block[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(b), s.scale[2 * p + 1], block[t]);
            }
        }
        for (int t = 0; t < T; ++t) {
            // Sub-block j's activation sum: bsums 2j and 2j + 1.
            const __m256i bsums = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[t]->bsums));
            alignas(32) float sums[8];
            _mm256_store_ps(sums, _mm256_cvtepi32_ps(_mm256_madd_epi16(bsums, _mm256_set1_epi16(1))));
            for (int j = 0; j < 8; ++j) block[t] = _mm512_fnmadd_ps(s.min[j], _mm512_set1_ps(sums[j]), block[t]);
            acc[t] = _mm512_fmadd_ps(block[t], _mm512_set1_ps(xb[t]->d), acc[t]);
        }
    }
    for (int t = 0; t < T; ++t) {
        const __m512 rows = _mm512_add_ps(acc[t], _mm512_permute_ps(acc[t], 0xB1));  // row r in lane 2r
        _mm256_storeu_ps(y + size_t(t) * y_stride, _mm512_castps512_ps256(_mm512_maskz_compress_ps(0x5555, rows)));
    }
}

}  // namespace

void gemm_q4_k_r8_q8_k_avx512(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride) {
    const auto* g = static_cast<const uint8_t*>(group);
    for_each_tile<8>(n_tokens, [&](int64_t t, auto size) {
        gemm_tile<decltype(size)::value>(n, g, x + size_t(t) * x_stride, x_stride, y + size_t(t) * y_stride, y_stride);
    });
}

}  // namespace ember::tensor

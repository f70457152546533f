#pragma once
// What the AVX-512 kernels of grouped rows (tensor/grouped_rows.h) share: row r's sums in lanes
// 2r and 2r + 1 of every vector, eight-byte activation broadcasts, prefetches, and the fold of
// each row's two lanes into its dot product.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tensor/quant_blocks.h"

namespace ember::tensor::r8 {

inline __m512i broadcast8(const void* p) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return _mm512_set1_epi64(v);
}

// A vpermb order for 64 bytes where byte 8j + r is row r's value j (j < 8): int16 i = 2(2r + h) + e
// of each 256-bit half widened (lane 2r + h, pair element e) takes value 2h + e of row r from the
// low half, and value 4 + 2h + e from the high half. A row's two lanes then hold its eight values
// once, paired with per-value int16 terms repeated every 64 bits by vpdpwssd.
inline __m512i lane_pair_order() {
    alignas(64) uint8_t idx[64];
    for (int k = 0; k < 64; ++k) {
        const int i = k % 32;
        idx[k] = uint8_t(32 * (k / 32) + 16 * ((i / 2) % 2) + 8 * (i % 2) + i / 4);
    }
    return _mm512_load_si512(idx);
}

// Eight rows' fp16 values at p as floats in lanes 2r and 2r + 1.
inline __m512 row_pairs(const uint8_t* fp16) {
    const __m512i pairs = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
    return _mm512_permutexvar_ps(pairs, _mm512_castps256_ps512(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(fp16)))));
}

// Row r's dot product with token t, the sum of lanes 2r and 2r + 1 of acc[t], into y[t * y_stride + r].
template <int T>
void store_rows(const __m512 (&acc)[T], float* y, size_t y_stride) {
    for (int t = 0; t < T; ++t) {
        const __m512 rows = _mm512_add_ps(acc[t], _mm512_permute_ps(acc[t], 0xB1));  // row r in lane 2r
        _mm256_storeu_ps(y + size_t(t) * y_stride, _mm512_castps512_ps256(_mm512_maskz_compress_ps(0x5555, rows)));
    }
}

// Every cache line of a unit `bytes` long at p, into L1 (a no-op for addresses past the matrix).
inline void prefetch_unit(const uint8_t* p, size_t bytes) {
    for (size_t line = 0; line < bytes; line += 64) _mm_prefetch(reinterpret_cast<const char*>(p + line), _MM_HINT_T0);
}

// Four groups against one token (KernelTable's gemv4 entries): unit i of each group in turn,
// prefetched `prefetch` bytes ahead in its stream, added by unit_tile(unit, xb, acc) with
// xb = {token's super-block i} and acc[s] = {group s's sums}.
template <size_t kUnitBytes, typename UnitTile>
void gemv4_by_units(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch,
                    UnitTile unit_tile) {
    __m512 acc[4][1];
    for (int s = 0; s < 4; ++s) acc[s][0] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const BlockQ8_K* xb[1] = {reinterpret_cast<const BlockQ8_K*>(x) + i};
        for (int s = 0; s < 4; ++s) {
            const uint8_t* unit = static_cast<const uint8_t*>(groups[s]) + size_t(i) * kUnitBytes;
            prefetch_unit(unit + prefetch, kUnitBytes);
            unit_tile(unit, xb, acc[s]);
        }
    }
    for (int s = 0; s < 4; ++s) store_rows(acc[s], y[s], 0);
}

}  // namespace ember::tensor::r8

#pragma once
// What the AVX2 kernels of grouped rows (Q4_0_R8, Q4_K_R8; tensor/grouped_rows.h) share: a
// group's eight rows taken as two halves of four, row r' of a half in lanes 2r' and 2r' + 1.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tensor/x86/kernels_x86.h"

namespace ember::tensor::r8_avx2 {

inline __m256i broadcast8(const void* p) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return _mm256_set1_epi64x(v);
}

// Row r's dot product with token t, from the halves' lanes (rows 0-3 in low[t], 4-7 in high[t]),
// into y[t * y_stride + r].
template <int T>
void store_rows(const __m256 (&low)[T], const __m256 (&high)[T], float* y, size_t y_stride) {
    for (int t = 0; t < T; ++t) {
        // hadd: rows 0, 1, 4, 5 | 2, 3, 6, 7.
        const __m256 pairs = _mm256_hadd_ps(low[t], high[t]);
        _mm256_storeu_ps(y + size_t(t) * y_stride, _mm256_permutevar8x32_ps(pairs, _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7)));
    }
}

// A group against n_tokens tokens, in tiles of four then the rest: half(size, h, x_t, out) fills
// out[0..T) with rows 4h..4h + 3 against the T tokens from x_t, T = decltype(size)::value.
template <typename Half>
void gemm_by_halves(int64_t n_tokens, const uint8_t* x, size_t x_stride, float* y, size_t y_stride, Half half) {
    for_each_tile<4>(n_tokens, [&](int64_t t, auto size) {
        constexpr int T = decltype(size)::value;
        __m256 low[T], high[T];
        half(size, 0, x + size_t(t) * x_stride, low);
        half(size, 1, x + size_t(t) * x_stride, high);
        store_rows(low, high, y + size_t(t) * y_stride, y_stride);
    });
}

}  // namespace ember::tensor::r8_avx2

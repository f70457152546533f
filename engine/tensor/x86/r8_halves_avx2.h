#pragma once
// What the AVX2 kernels of grouped rows (Q4_0_R8, Q4_K_R8, Q5_K_R8, Q6_K_R8;
// tensor/grouped_rows.h) share: a group's eight rows taken as two halves of four, row r' of a
// half in lanes 2r' and 2r' + 1.
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

// A kernel's half, Half<h>(n) for rows 4h..4h + 3 of groups of rows n long, has add<T>(unit, i,
// x, x_stride, out): it adds unit i's products with T tokens from x (x_stride apart) to
// out[0..T), each row's sum in lanes 2r' and 2r' + 1. kUnitBytes and kUnitElements size a unit.
// h is a template argument so that each half's offsets and shuffles are constants. The two
// drivers below add a row's units in the same order, so they agree bit for bit.

// A group against n_tokens tokens, in tiles of four then the rest, one half after the other so
// that a half's weights and a tile of tokens fit the sixteen registers.
template <template <int> class Half>
void gemm_by_halves(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                    size_t y_stride) {
    const auto* g = static_cast<const uint8_t*>(group);
    for_each_tile<4>(n_tokens, [&](int64_t t, auto size) {
        constexpr int T = decltype(size)::value;
        __m256 low[T], high[T];
        const auto run = [&](const auto& rows, __m256* out) {
            for (int k = 0; k < T; ++k) out[k] = _mm256_setzero_ps();
            for (int64_t i = 0; i < n / Half<0>::kUnitElements; ++i)
                rows.template add<T>(g + size_t(i) * Half<0>::kUnitBytes, i, x + size_t(t) * x_stride, x_stride, out);
        };
        run(Half<0>(n), low);
        run(Half<1>(n), high);
        store_rows(low, high, y + size_t(t) * y_stride, y_stride);
    });
}

// Four groups against one token, unit by unit across the four streams, each prefetched
// `prefetch` bytes ahead (KernelTable's gemv4 entries).
template <template <int> class Half>
void gemv4_by_halves(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    constexpr size_t kUnitBytes = Half<0>::kUnitBytes;
    const Half<0> rows_low(n);
    const Half<1> rows_high(n);
    __m256 low[4][1], high[4][1];
    for (int s = 0; s < 4; ++s) low[s][0] = high[s][0] = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / Half<0>::kUnitElements; ++i)
        for (int s = 0; s < 4; ++s) {
            const uint8_t* unit = static_cast<const uint8_t*>(groups[s]) + size_t(i) * kUnitBytes;
            for (size_t line = 0; line < kUnitBytes; line += 64)
                _mm_prefetch(reinterpret_cast<const char*>(unit + prefetch + line), _MM_HINT_T0);
            rows_low.template add<1>(unit, i, x, 0, low[s]);
            rows_high.template add<1>(unit, i, x, 0, high[s]);
        }
    for (int s = 0; s < 4; ++s) store_rows(low[s], high[s], y[s], 0);
}

}  // namespace ember::tensor::r8_avx2

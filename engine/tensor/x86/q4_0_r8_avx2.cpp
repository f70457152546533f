// AVX2 product of a Q4_0_R8 or Q8_0_R8 group (tensor/grouped_rows.h) with the AVX2 table's Q8_0
// activation rows. A 256-bit vector holds eight quant bytes of four rows, so a unit's 64-byte words are
// read as rows 0-3 and rows 4-7 (r8_halves_avx2.h), lanes 2r and 2r + 1 of each for its row r.
// maddubs multiplies the unsigned nibbles by an eight-byte activation broadcast, sums stay
// exact in 16 bits (4 · 2 · 15 · 128 < 2^15), and the nibbles' +8 comes off as the
// activation's -8 · Σ x, added to a row's first lane. Only the order of the float sums differs from
// dot_q4_0_q8_0.
#include <immintrin.h>

#include <cstring>

#include "tensor/grouped_rows.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/r8_halves_avx2.h"

namespace ember::tensor {
namespace {

template <int h>
struct Q4_0Half {
    static constexpr size_t kUnitBytes = kQ4_0R8UnitBytes;
    static constexpr int64_t kUnitElements = kQK;

    int64_t n_blocks;
    size_t extras;

    explicit Q4_0Half(int64_t n) : n_blocks(n / kQK), extras(avx2_q8_extras_offset(n)) {}

    template <int T>
    void add(const uint8_t* unit, int64_t i, const uint8_t* x, size_t x_stride, __m256* out) const {
        const __m256i nibble = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
        const __m256i pairs = h ? _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7) : _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
        const __m256 dw = _mm256_permutevar8x32_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(unit))), pairs);
        __m256i lo[2], hi[2];
        for (int c = 0; c < 2; ++c) {
            const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 16 + 64 * c + 32 * h));
            lo[c] = _mm256_and_si256(q, nibble);
            hi[c] = _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble);
        }
        for (int t = 0; t < T; ++t) {
            const uint8_t* row = x + size_t(t) * x_stride;
            const int8_t* xq = reinterpret_cast<const BlockQ8_0*>(row)[i].qs;
            __m256i s = _mm256_maddubs_epi16(lo[0], r8_avx2::broadcast8(xq));
            s = _mm256_add_epi16(s, _mm256_maddubs_epi16(hi[0], r8_avx2::broadcast8(xq + 16)));
            s = _mm256_add_epi16(s, _mm256_maddubs_epi16(lo[1], r8_avx2::broadcast8(xq + 8)));
            s = _mm256_add_epi16(s, _mm256_maddubs_epi16(hi[1], r8_avx2::broadcast8(xq + 24)));
            float dx;
            int32_t offset;
            std::memcpy(&dx, row + extras + 4 * size_t(i), 4);
            std::memcpy(&offset, row + extras + 4 * size_t(n_blocks + i), 4);
            __m256i sum = _mm256_madd_epi16(s, ones);
            sum = _mm256_blend_epi32(sum, _mm256_add_epi32(sum, _mm256_set1_epi32(offset)), 0x55);
            out[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(dw, _mm256_set1_ps(dx)), out[t]);
        }
    }
};

// Q8_0_R8 on the same activations: maddubs takes |w| and the activation with w's sign, so a
// pair's sum stays within int16 (2 · 127 · 128 < 2^15), and madd widens each chunk's pairs.
template <int h>
struct Q8_0Half {
    static constexpr size_t kUnitBytes = kQ8_0R8UnitBytes;
    static constexpr int64_t kUnitElements = kQK;

    size_t extras;

    explicit Q8_0Half(int64_t n) : extras(avx2_q8_extras_offset(n)) {}

    template <int T>
    void add(const uint8_t* unit, int64_t i, const uint8_t* x, size_t x_stride, __m256* out) const {
        const __m256i ones = _mm256_set1_epi16(1);
        const __m256i pairs = h ? _mm256_setr_epi32(4, 4, 5, 5, 6, 6, 7, 7) : _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
        const __m256 dw = _mm256_permutevar8x32_ps(_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(unit))), pairs);
        __m256i w[4], magnitude[4];
        for (int c = 0; c < 4; ++c) {
            w[c] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(unit + 16 + 64 * c + 32 * h));
            magnitude[c] = _mm256_abs_epi8(w[c]);
        }
        for (int t = 0; t < T; ++t) {
            const uint8_t* row = x + size_t(t) * x_stride;
            const int8_t* xq = reinterpret_cast<const BlockQ8_0*>(row)[i].qs;
            __m256i sum = _mm256_setzero_si256();
            for (int c = 0; c < 4; ++c) {
                const __m256i signed_x = _mm256_sign_epi8(r8_avx2::broadcast8(xq + 8 * c), w[c]);
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(magnitude[c], signed_x), ones));
            }
            float dx;
            std::memcpy(&dx, row + extras + 4 * size_t(i), 4);
            out[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(dw, _mm256_set1_ps(dx)), out[t]);
        }
    }
};

}  // namespace

void gemm_q4_0_r8_q8_0_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride) {
    r8_avx2::gemm_by_halves<Q4_0Half>(n, group, x, x_stride, n_tokens, y, y_stride);
}

void gemv4_q4_0_r8_q8_0_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    r8_avx2::gemv4_by_halves<Q4_0Half>(n, groups, x, y, prefetch);
}

void gemm_q8_0_r8_q8_0_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride) {
    r8_avx2::gemm_by_halves<Q8_0Half>(n, group, x, x_stride, n_tokens, y, y_stride);
}

void gemv4_q8_0_r8_q8_0_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    r8_avx2::gemv4_by_halves<Q8_0Half>(n, groups, x, y, prefetch);
}

}  // namespace ember::tensor

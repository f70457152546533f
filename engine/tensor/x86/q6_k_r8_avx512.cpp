// AVX-512 VNNI product of a Q6_K_R8 group (tensor/grouped_rows.h) with Q8_K activation rows, laid
// out as the Q4_K_R8 kernel's: lanes 2r and 2r + 1 belong to row r, a 64-byte load holds eight
// bytes of every row and meets one eight-byte activation broadcast. The 6-bit quants (0..63,
// stored +32) are put together from ql and qh bytes in the vector. vpmaddubsw pairs their
// products exactly (|q·x| ≤ 63·128) and vpdpwssd weights each pair by its row's 16-element
// scale, so a super-block stays in integers; the +32 comes off per row as 32 · Σ scale_g·bsum_g.
// Only the order of the float sums differs from the row kernel dot_q6_k_q8_k.
#include <immintrin.h>

#include "tensor/grouped_rows.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/r8_lanes.h"

namespace ember::tensor {
namespace {

// vpermb orders for 64 scale bytes (byte 8g + r: row r's scale g of eight groups) whose two
// 256-bit halves widen to int16 vectors. A group's vector: int16 i holds scale g of row i / 4,
// group a's in the low half and b's in the high half.
inline __m512i group_order(int a, int b) {
    alignas(64) uint8_t idx[64];
    for (int k = 0; k < 64; ++k) idx[k] = uint8_t(8 * (k < 32 ? a : b) + (k % 32) / 4);
    return _mm512_load_si512(idx);
}

inline void widen(__m512i bytes, __m512i& low, __m512i& high) {
    low = _mm512_cvtepi8_epi16(_mm512_castsi512_si256(bytes));
    high = _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(bytes, 1));
}

// (a & 0x0F) | b, b holding only bits 4 and 5.
inline __m512i quant(__m512i a, __m512i b, __m512i low4) { return _mm512_ternarylogic_epi32(a, b, low4, 0xEC); }

struct Constants {
    __m512i low4 = _mm512_set1_epi8(0x0F), bits01 = _mm512_set1_epi8(0x03), bits23 = _mm512_set1_epi8(0x0C),
            bits45 = _mm512_set1_epi8(0x30), bits67 = _mm512_set1_epi8(char(0xC0));
    // [cp][pair]: the groups 2m + cp of a half's eight, m = 0, 1 and m = 2, 3.
    __m512i groups[2][2] = {{group_order(0, 2), group_order(4, 6)}, {group_order(1, 3), group_order(5, 7)}};
    // For the +32 term: four vpdpwssd against bsums 4k..4k+3 cover a row's sixteen groups.
    __m512i offsets = r8::lane_pair_order();
};

// One unit's products with T tokens' Q8_K blocks, added to acc.
template <int T>
inline void unit_tile(const uint8_t* unit, const BlockQ8_K* const (&xb)[T], const Constants& k, __m512 (&acc)[T]) {
    // A super-block is 32 vpdpwssd per token; with few tokens one accumulator would make them a
    // chain waiting on each other's latency, so small tiles split them over independent sums.
    constexpr int kChains = T <= 2 ? 4 : T <= 4 ? 2 : 1;
    const __m512 d = r8::row_pairs(unit);
    const __m512i scales[2] = {_mm512_loadu_si512(unit + kQ6_KR8Scales), _mm512_loadu_si512(unit + kQ6_KR8Scales + 64)};
    __m512i sum[T][kChains];
    for (int t = 0; t < T; ++t)
        for (int c = 0; c < kChains; ++c) sum[t][c] = _mm512_setzero_si512();
    // Element 128h + 32m + 8c + b of a row: ql chunk 8h + c (m = 0, 2) or 8h + 4 + c (m = 1, 3),
    // low nibble for m < 2; qh chunk 4h + c, bits 2m and 2m + 1; scale 8h + 2m + c / 2.
    for (int h = 0; h < 2; ++h)
        for (int cp = 0; cp < 2; ++cp) {
            __m512i scale[4];
            widen(_mm512_permutexvar_epi8(k.groups[cp][0], scales[h]), scale[0], scale[1]);
            widen(_mm512_permutexvar_epi8(k.groups[cp][1], scales[h]), scale[2], scale[3]);
            for (int c = 2 * cp; c < 2 * cp + 2; ++c) {
                const __m512i a = _mm512_loadu_si512(unit + kQ6_KR8Low + 64 * (8 * h + c));
                const __m512i b = _mm512_loadu_si512(unit + kQ6_KR8Low + 64 * (8 * h + 4 + c));
                const __m512i hb = _mm512_loadu_si512(unit + kQ6_KR8High + 64 * (4 * h + c));
                const __m512i u[4] = {
                    quant(a, _mm512_slli_epi16(_mm512_and_si512(hb, k.bits01), 4), k.low4),
                    quant(b, _mm512_slli_epi16(_mm512_and_si512(hb, k.bits23), 2), k.low4),
                    quant(_mm512_srli_epi16(a, 4), _mm512_and_si512(hb, k.bits45), k.low4),
                    quant(_mm512_srli_epi16(b, 4), _mm512_srli_epi16(_mm512_and_si512(hb, k.bits67), 2), k.low4),
                };
                for (int t = 0; t < T; ++t) {
                    const int8_t* xq = xb[t]->qs + 128 * h + 8 * c;
                    for (int m = 0; m < 4; ++m)
                        sum[t][m % kChains] = _mm512_dpwssd_epi32(
                            sum[t][m % kChains], _mm512_maddubs_epi16(u[m], r8::broadcast8(xq + 32 * m)), scale[m]);
                }
            }
        }
    __m512i offset_scale[4];
    widen(_mm512_permutexvar_epi8(k.offsets, scales[0]), offset_scale[0], offset_scale[1]);
    widen(_mm512_permutexvar_epi8(k.offsets, scales[1]), offset_scale[2], offset_scale[3]);
    for (int t = 0; t < T; ++t) {
        __m512i offset = _mm512_setzero_si512();
        for (int j = 0; j < 4; ++j) offset = _mm512_dpwssd_epi32(offset, offset_scale[j], r8::broadcast8(xb[t]->bsums + 4 * j));
        __m512i total = _mm512_sub_epi32(sum[t][0], _mm512_slli_epi32(offset, 5));
        for (int c = 1; c < kChains; ++c) total = _mm512_add_epi32(total, sum[t][c]);
        acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(d, _mm512_set1_ps(xb[t]->d)), _mm512_cvtepi32_ps(total), acc[t]);
    }
}

template <int T>
void gemm_tile(int64_t n, const uint8_t* group, const uint8_t* x, size_t x_stride, float* y, size_t y_stride) {
    const Constants k;
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const BlockQ8_K* xb[T];
        for (int t = 0; t < T; ++t) xb[t] = reinterpret_cast<const BlockQ8_K*>(x + size_t(t) * x_stride) + i;
        unit_tile<T>(group + size_t(i) * kQ6_KR8UnitBytes, xb, k, acc);
    }
    r8::store_rows(acc, y, y_stride);
}

}  // namespace

void gemm_q6_k_r8_q8_k_avx512(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride) {
    const auto* g = static_cast<const uint8_t*>(group);
    for_each_tile<8>(n_tokens, [&](int64_t t, auto size) {
        gemm_tile<decltype(size)::value>(n, g, x + size_t(t) * x_stride, x_stride, y + size_t(t) * y_stride, y_stride);
    });
}

void gemv4_q6_k_r8_q8_k_avx512(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    const Constants k;
    r8::gemv4_by_units<kQ6_KR8UnitBytes>(
        n, groups, x, y, prefetch,
        [&](const uint8_t* unit, const BlockQ8_K* const (&xb)[1], __m512 (&acc)[1]) { unit_tile<1>(unit, xb, k, acc); });
}

}  // namespace ember::tensor

// Grouped Q4_K and Q5_K rows against batches of tokens on AMX's tile unit: each 32-column sub-block is one
// tile product of sixteen tokens by sixteen rows, scaled in AVX-512 by its row scales (d · scale)
// and the token's super-block scale, its minimum taken off through the activations' sums
// (dmin · minimum · Σx). Compiled with AMX flags only for this file (see r8_tiles_amx.cpp).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "tensor/grouped_rows.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/amx_tiles.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

using amx::kTileRows;
using amx::kTileTokens;
using amx::kWeightTileBytes;

constexpr int kSubBlocks = 8;
// An unpacked super-block of a pair: eight weight tiles, then per sub-block the sixteen rows'
// d · scale and -dmin · minimum as floats.
constexpr size_t kRowScales = kSubBlocks * kWeightTileBytes;
constexpr size_t kRowMins = kRowScales + kSubBlocks * kTileRows * sizeof(float);
constexpr size_t kUnpackedBytes = kRowMins + kSubBlocks * kTileRows * sizeof(float);
// A tile's scales per super-block: the sixteen tokens' d, then per sub-block their d · Σx.
constexpr int64_t kTileScaleFloats = (1 + kSubBlocks) * kTileTokens;

// kFifth: Q5_K, whose units add each quant's fifth bit after Q4_K's (tensor/grouped_rows.h).
template <bool kFifth>
struct KTiles {
    static constexpr int64_t kUnitColumns = kQK_K;
    static constexpr size_t kUnitBytes = kFifth ? kQ5_KR8UnitBytes : kQ4_KR8UnitBytes;

    static size_t pair_bytes(int64_t n) { return size_t(n / kQK_K) * kUnpackedBytes; }

    // Sub-block 2p's quants are the low nibbles of chunks 128 + 256p + 64c, sub-block 2p + 1's the
    // high ones; chunk c holds columns 8c..8c+7 of each: tile rows 2c and 2c + 1. Q5_K's fifth
    // bits are bits 2p and 2p + 1 of the qh chunk c.
    static void unpack_pair(const uint8_t* first, const uint8_t* second, int64_t n, uint8_t* out) {
        const __m512i half0 = amx::chunk_half(0), half1 = amx::chunk_half(1), nibble = _mm512_set1_epi8(0x0F);
        for (int64_t i = 0; i < n / kQK_K; ++i) {
            const uint8_t* u[2] = {first + size_t(i) * kUnitBytes, second + size_t(i) * kUnitBytes};
            uint8_t* sb = out + size_t(i) * kUnpackedBytes;
            for (int p = 0; p < 4; ++p)
                for (int c = 0; c < 4; ++c) {
                    const __m512i a = _mm512_loadu_si512(u[0] + 128 + 256 * p + 64 * c);
                    const __m512i b = _mm512_loadu_si512(u[1] + 128 + 256 * p + 64 * c);
                    __m512i a_lo = _mm512_and_si512(a, nibble), b_lo = _mm512_and_si512(b, nibble);
                    __m512i a_hi = _mm512_and_si512(_mm512_srli_epi16(a, 4), nibble);
                    __m512i b_hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), nibble);
                    if constexpr (kFifth) {
                        const __m512i ha = _mm512_loadu_si512(u[0] + kQ5_KR8High + 64 * c);
                        const __m512i hb = _mm512_loadu_si512(u[1] + kQ5_KR8High + 64 * c);
                        // Bit k of every byte moved to bit 4: shifts of 16-bit lanes, then masked.
                        const auto fifth = [](__m512i h, int k) {
                            const __m512i bit = _mm512_set1_epi8(0x10);
                            return _mm512_and_si512(k <= 4 ? _mm512_sll_epi16(h, _mm_cvtsi32_si128(4 - k))
                                                           : _mm512_srl_epi16(h, _mm_cvtsi32_si128(k - 4)),
                                                    bit);
                        };
                        a_lo = _mm512_or_si512(a_lo, fifth(ha, 2 * p));
                        b_lo = _mm512_or_si512(b_lo, fifth(hb, 2 * p));
                        a_hi = _mm512_or_si512(a_hi, fifth(ha, 2 * p + 1));
                        b_hi = _mm512_or_si512(b_hi, fifth(hb, 2 * p + 1));
                    }
                    uint8_t* low = sb + size_t(2 * p) * kWeightTileBytes + 128 * c;
                    amx::store_chunk_rows(low, a_lo, b_lo, half0, half1);
                    amx::store_chunk_rows(low + kWeightTileBytes, a_hi, b_hi, half0, half1);
                }
            auto* scales = reinterpret_cast<float*>(sb + kRowScales);
            auto* mins = reinterpret_cast<float*>(sb + kRowMins);
            for (int row = 0; row < kTileRows; ++row) {
                const uint8_t* unit = u[row / 8];
                const int r = row % 8;
                const float d = half(uint16_t(unit[2 * r] | unit[2 * r + 1] << 8));
                const float dmin = half(uint16_t(unit[16 + 2 * r] | unit[17 + 2 * r] << 8));
                for (int j = 0; j < kSubBlocks; ++j) {
                    const uint8_t low = unit[32 + 8 * j + r], high = unit[96 + 8 * (j % 4) + r];
                    const int shift = j < 4 ? 0 : 2;
                    scales[16 * j + row] = d * float((low & 15) | (((high >> shift) & 3) << 4));
                    mins[16 * j + row] = -dmin * float((low >> 4) | (((high >> (shift + 4)) & 3) << 4));
                }
            }
        }
    }

    static size_t tile_scale_bytes(int64_t n) {
        return size_t((n / kQK_K + 1) / 2 * 2) * kTileScaleFloats * sizeof(float);
    }

    // Sixteen tokens' scales per super-block: s[0..16) their d, s[16 + 16j + t] token t's
    // d · Σx over sub-block j, transposed from two super-blocks' eight sums per token at a time.
    static void tile_scales(const uint8_t* x, size_t x_stride, int64_t n, float* s) {
        const int64_t n_super = n / kQK_K;
        const auto block = [&](int t, int64_t i) {
            return reinterpret_cast<const BlockQ8_K*>(x + size_t(t) * x_stride) + i;
        };
        const __m256i ones = _mm256_set1_epi16(1);
        for (int64_t i = 0; i < n_super; i += 2) {
            __m512 r[16];
            for (int t = 0; t < kTileTokens; ++t) {
                __m256 sums[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
                for (int64_t k = 0; k < 2 && i + k < n_super; ++k) {
                    const BlockQ8_K* b = block(t, i + k);
                    const __m256i pairs = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->bsums)), ones);
                    sums[k] = _mm256_mul_ps(_mm256_cvtepi32_ps(pairs), _mm256_set1_ps(b->d));
                    s[size_t(i + k) * kTileScaleFloats + size_t(t)] = b->d;
                }
                r[t] = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(sums[0])), _mm256_castps_pd(sums[1]), 1));
            }
            amx::transpose16(r);
            for (int k = 0; k < 2 * kSubBlocks; ++k)
                _mm512_storeu_ps(s + size_t(i + k / kSubBlocks) * kTileScaleFloats + 16 * (1 + k % kSubBlocks), r[k]);
        }
    }

    // Sixteen tokens (x at the first) against an unpacked pair: y[t * y_stride + r], r < 16.
    static void product(int64_t n, const uint8_t* unpacked, const uint8_t* x, size_t x_stride, const float* ts,
                        float* y, size_t y_stride) {
        __m512 acc[kTileTokens];
        for (__m512& a : acc) a = _mm512_setzero_ps();
        const auto weights = [&](int64_t k) {
            return unpacked + size_t(k / kSubBlocks) * kUnpackedBytes + size_t(k % kSubBlocks) * kWeightTileBytes;
        };
        const auto quants = [&](int64_t k) {
            return x + size_t(k / kSubBlocks) * sizeof(BlockQ8_K) + offsetof(BlockQ8_K, qs) + size_t(k % kSubBlocks) * 32;
        };
        // acc[t] += float(sums[t]) · d · scale · token t's d - dmin · minimum · token t's d · Σx.
        const auto scale = [&](const int32_t* s, int64_t k) {
            const uint8_t* sb = unpacked + size_t(k / kSubBlocks) * kUnpackedBytes;
            const __m512 dw = _mm512_load_ps(reinterpret_cast<const float*>(sb + kRowScales) + 16 * (k % kSubBlocks));
            const __m512 mw = _mm512_load_ps(reinterpret_cast<const float*>(sb + kRowMins) + 16 * (k % kSubBlocks));
            const float* d = ts + size_t(k / kSubBlocks) * kTileScaleFloats;
            const float* dsum = d + 16 * (1 + k % kSubBlocks);
#pragma GCC unroll 16
            for (int t = 0; t < kTileTokens; ++t) {
                const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(s + 16 * t)), dw);
                acc[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(dsum[t]), _mm512_fmadd_ps(v, _mm512_set1_ps(d[t]), acc[t]));
            }
        };
        amx::pipelined(n / kQK_K * kSubBlocks, x_stride, quants, weights, scale);
        for (int t = 0; t < kTileTokens; ++t) _mm512_storeu_ps(y + size_t(t) * y_stride, acc[t]);
    }
};

}  // namespace

void add_k_quant_tiles(KernelTable& t) {
    t.gemm_groups_q4_k_r8_q8_k = amx::entry<KTiles<false>, &KernelTable::gemm_q4_k_r8_q8_k>;
    t.gemm_groups_q5_k_r8_q8_k = amx::entry<KTiles<true>, &KernelTable::gemm_q5_k_r8_q8_k>;
}

}  // namespace ember::tensor

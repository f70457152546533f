// Grouped Q4_0 and Q8_0 rows against batches of tokens on AMX's tile unit (Sapphire Rapids and
// later Xeons): one instruction multiplies sixteen tokens by sixteen rows over a 32-column block,
// where VNNI needs 64. Each block has its own scales, so every block's integer tile is stored and
// scaled into float sums with AVX-512; that, not the tile multiply, is the work per block.
// Compiled with AMX flags only for this file; used only when the CPU has AMX and Linux lets the
// process use its tile registers (cpu_dispatch.cpp).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "tensor/grouped_rows.h"
#include "tensor/kernels.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/amx_tiles.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

using amx::kTileRows;
using amx::kTileTokens;
using amx::kWeightTileBytes;

// An unpacked block of a pair: its weight tile, then the sixteen rows' scales as floats.
constexpr size_t kUnpackedBlockBytes = kWeightTileBytes + kTileRows * sizeof(float);

// After the AVX-512 table's activation row, from the next 64-byte boundary: each block's scale as
// a float, zero-padded to a multiple of sixteen blocks, for sixteen tokens' scales to be
// transposed from (converting the fp16 scales one by one cost more than the tile products).
constexpr int64_t kScaleRun = 16;

int64_t padded_blocks(int64_t n) { return (n / kQK + kScaleRun - 1) / kScaleRun * kScaleRun; }

size_t scales_offset(int64_t n) { return (avx512_kernels().q8_activation_bytes(n) + 63) / 64 * 64; }

size_t q8_activation_bytes(int64_t n) { return scales_offset(n) + size_t(padded_blocks(n)) * sizeof(float); }

void prepare_q8_activation(const float* x, void* out, int64_t n) {
    avx512_kernels().prepare_q8_activation(x, out, n);
    const auto* blocks = static_cast<const BlockQ8_0*>(out);
    auto* d = reinterpret_cast<float*>(static_cast<uint8_t*>(out) + scales_offset(n));
    for (int64_t i = 0; i < padded_blocks(n); ++i) d[i] = i < n / kQK ? half(blocks[i].d) : 0.0f;
}

// Sixteen rows' scales of one block: the first group's eight, then the second's.
__m512 unit_scales(const uint8_t* u0, const uint8_t* u1) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u0));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u1));
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1));
}

template <class Unpack>
struct BlockTiles {
    static constexpr int64_t kUnitColumns = kQK;
    static constexpr size_t kUnitBytes = Unpack::kUnitBytes;

    static size_t pair_bytes(int64_t n) { return size_t(n / kQK) * kUnpackedBlockBytes; }

    static void unpack_pair(const uint8_t* first, const uint8_t* second, int64_t n, uint8_t* out) {
        const __m512i half0 = amx::chunk_half(0), half1 = amx::chunk_half(1);
        for (int64_t i = 0; i < n / kQK; ++i) {
            const uint8_t* u0 = first + size_t(i) * kUnitBytes;
            const uint8_t* u1 = second + size_t(i) * kUnitBytes;
            uint8_t* block = out + size_t(i) * kUnpackedBlockBytes;
            Unpack::quants(u0, u1, block, half0, half1);
            _mm512_store_ps(reinterpret_cast<float*>(block + kWeightTileBytes), unit_scales(u0, u1));
        }
    }

    static size_t tile_scale_bytes(int64_t n) { return size_t(padded_blocks(n)) * kTileTokens * sizeof(float); }

    // Sixteen tokens' block scales, block by block: dx[16i + t].
    static void tile_scales(const uint8_t* x, size_t x_stride, int64_t n, float* dx) {
        const uint8_t* scales = x + scales_offset(n);
        for (int64_t i = 0; i < padded_blocks(n); i += kScaleRun) {
            __m512 r[16];
            for (int t = 0; t < 16; ++t)
                r[t] = _mm512_loadu_ps(reinterpret_cast<const float*>(scales + size_t(t) * x_stride) + i);
            amx::transpose16(r);
            for (int k = 0; k < 16; ++k) _mm512_storeu_ps(dx + 16 * (i + k), r[k]);
        }
    }

    // Sixteen tokens (x at the first) against an unpacked pair: y[t * y_stride + r], r < 16.
    static void product(int64_t n, const uint8_t* unpacked, const uint8_t* x, size_t x_stride, const float* dx,
                        float* y, size_t y_stride) {
        __m512 acc[kTileTokens];
        for (__m512& a : acc) a = _mm512_setzero_ps();
        const auto weights = [&](int64_t i) { return unpacked + size_t(i) * kUnpackedBlockBytes; };
        const auto quants = [&](int64_t i) { return x + size_t(i) * sizeof(BlockQ8_0) + offsetof(BlockQ8_0, qs); };
        // acc[t] += float(sums[t]) · the rows' scales · token t's scale, block i.
        const auto scale = [&](const int32_t* s, int64_t i) {
            const __m512 dw = _mm512_load_ps(reinterpret_cast<const float*>(weights(i) + kWeightTileBytes));
            const float* d = dx + 16 * i;
#pragma GCC unroll 16
            for (int t = 0; t < kTileTokens; ++t)
                acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_load_si512(s + 16 * t)), dw),
                                         _mm512_set1_ps(d[t]), acc[t]);
        };
        amx::pipelined(n / kQK, x_stride, quants, weights, scale);
        for (int t = 0; t < kTileTokens; ++t) _mm512_storeu_ps(y + size_t(t) * y_stride, acc[t]);
    }
};

struct Q4_0Quants {
    static constexpr size_t kUnitBytes = kQ4_0R8UnitBytes;
    // Chunk c's low nibbles are columns 8c..8c+7, its high nibbles 16 + 8c..: tile rows 2c, 2c + 1
    // and 4 + 2c, 5 + 2c. The quants become signed (q - 8), so no offset is left to take off.
    static void quants(const uint8_t* u0, const uint8_t* u1, uint8_t* tile, __m512i half0, __m512i half1) {
        const __m512i nibble = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
        for (int c = 0; c < 2; ++c) {
            const __m512i a = _mm512_loadu_si512(u0 + 16 + 64 * c);
            const __m512i b = _mm512_loadu_si512(u1 + 16 + 64 * c);
            const __m512i a_lo = _mm512_sub_epi8(_mm512_and_si512(a, nibble), eight);
            const __m512i b_lo = _mm512_sub_epi8(_mm512_and_si512(b, nibble), eight);
            const __m512i a_hi = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(a, 4), nibble), eight);
            const __m512i b_hi = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(b, 4), nibble), eight);
            amx::store_chunk_rows(tile + 64 * (2 * c), a_lo, b_lo, half0, half1);
            amx::store_chunk_rows(tile + 64 * (4 + 2 * c), a_hi, b_hi, half0, half1);
        }
    }
};

struct Q8_0Quants {
    static constexpr size_t kUnitBytes = kQ8_0R8UnitBytes;
    // Chunk c is columns 8c..8c+7: tile rows 2c and 2c + 1.
    static void quants(const uint8_t* u0, const uint8_t* u1, uint8_t* tile, __m512i half0, __m512i half1) {
        for (int c = 0; c < 4; ++c) {
            const __m512i a = _mm512_loadu_si512(u0 + 16 + 64 * c);
            const __m512i b = _mm512_loadu_si512(u1 + 16 + 64 * c);
            amx::store_chunk_rows(tile + 64 * (2 * c), a, b, half0, half1);
        }
    }
};

}  // namespace

const KernelTable& amx_kernels() {
    static const KernelTable table = [] {
        KernelTable t = avx512_kernels();
        t.isa = "amx";
        t.q8_activation_bytes = q8_activation_bytes;
        t.prepare_q8_activation = prepare_q8_activation;
        t.gemm_groups_q4_0_r8_q8_0 = amx::entry<BlockTiles<Q4_0Quants>, &KernelTable::gemm_q4_0_r8_q8_0>;
        t.gemm_groups_q8_0_r8_q8_0 = amx::entry<BlockTiles<Q8_0Quants>, &KernelTable::gemm_q8_0_r8_q8_0>;
        add_k_quant_tiles(t);
        return t;
    }();
    return table;
}

}  // namespace ember::tensor

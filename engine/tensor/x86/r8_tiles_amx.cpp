// Grouped Q4_0 and Q8_0 rows against batches of tokens on AMX's tile unit (Sapphire Rapids and
// later Xeons): one instruction multiplies sixteen tokens by sixteen rows over a 32-column block,
// where VNNI needs 64. Each block has its own scales, so every block's integer tile is stored and
// scaled into float sums with AVX-512; that, not the tile multiply, is the work per block.
// Compiled with AMX flags only for this file; used only when the CPU has AMX and Linux lets the
// process use its tile registers (cpu_dispatch.cpp).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/grouped_rows.h"
#include "tensor/kernels.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

constexpr int kTileTokens = 16;
constexpr int kTileRows = 16;  // two groups
// A weight tile: the block's 32 columns of sixteen rows as the tile unit reads them, row k of
// the tile holding columns 4k..4k+3 of each row in turn; then the sixteen rows' scales.
constexpr size_t kWeightTileBytes = 512;
constexpr size_t kUnpackedBlockBytes = kWeightTileBytes + kTileRows * sizeof(float);

// The tiles' shapes: 0, 1 sixteen tokens' 32 bytes; 2, 3 a weight tile; 4, 5 sixteen tokens'
// sixteen int32 sums. Two of each, so one block's sums are scaled while the next is multiplied.
struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {32, 32, 64, 64, 64, 64};
    uint8_t rows[16] = {16, 16, 8, 8, 16, 16};
};

// After the AVX-512 table's activation row, from the next 64-byte boundary: each block's scale as
// a float, zero-padded to a multiple of sixteen blocks, for the tiles' scales to be transposed
// from (the fp16 scales one by one cost more than the tile products they scale).
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

// r[t] = column t of the 16 × 16 floats in r.
inline void transpose16(__m512* r) {
    __m512 t[16], u[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    const auto pd = [](__m512 v) { return _mm512_castps_pd(v); };
    for (int i = 0; i < 4; ++i) {
        u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[4 * i]), pd(t[4 * i + 2])));
        u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[4 * i]), pd(t[4 * i + 2])));
        u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[4 * i + 1]), pd(t[4 * i + 3])));
        u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[4 * i + 1]), pd(t[4 * i + 3])));
    }
    // u[4i + j], 128-bit lane L: rows 4i..4i+3 of column 4L + j.
    for (int j = 0; j < 4; ++j) {
        t[j] = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
        t[4 + j] = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xdd);
        t[8 + j] = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xdd);
    }
    for (int j = 0; j < 4; ++j) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
        r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
        r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xdd);
    }
}

// Sixteen tokens' block scales, block by block: dx[16i + t].
void tile_scales(const uint8_t* x, size_t x_stride, int64_t n, float* dx) {
    const uint8_t* scales = x + scales_offset(n);
    for (int64_t i = 0; i < padded_blocks(n); i += kScaleRun) {
        __m512 r[16];
        for (int t = 0; t < 16; ++t)
            r[t] = _mm512_loadu_ps(reinterpret_cast<const float*>(scales + size_t(t) * x_stride) + i);
        transpose16(r);
        for (int k = 0; k < 16; ++k) _mm512_storeu_ps(dx + 16 * (i + k), r[k]);
    }
}

// vpermt2b indices: byte 4n + j of a weight tile row from byte 8n + 4h + j of the two groups'
// eight-byte chunks (n < 8 the first group, n >= 8 the second, whose bytes come 64 later).
__m512i chunk_half(int h) {
    alignas(64) uint8_t idx[64];
    for (int i = 0; i < 64; ++i) idx[i] = uint8_t(8 * (i / 4) + 4 * h + i % 4);
    return _mm512_load_si512(idx);
}

// Sixteen rows' scales of one block: the first group's eight, then the second's.
__m512 unit_scales(const uint8_t* u0, const uint8_t* u1) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u0));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(u1));
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1));
}

struct Q4_0Tiles {
    static constexpr size_t kUnitBytes = kQ4_0R8UnitBytes;
    // Chunk c's low nibbles are columns 8c..8c+7, its high nibbles 16 + 8c..: tile rows 2c, 2c + 1
    // and 4 + 2c, 5 + 2c. The quants become signed (q - 8), so no offset is left to take off.
    static void unpack(const uint8_t* u0, const uint8_t* u1, uint8_t* tile, __m512i half0, __m512i half1) {
        const __m512i nibble = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8);
        for (int c = 0; c < 2; ++c) {
            const __m512i a = _mm512_loadu_si512(u0 + 16 + 64 * c);
            const __m512i b = _mm512_loadu_si512(u1 + 16 + 64 * c);
            const __m512i a_lo = _mm512_sub_epi8(_mm512_and_si512(a, nibble), eight);
            const __m512i b_lo = _mm512_sub_epi8(_mm512_and_si512(b, nibble), eight);
            const __m512i a_hi = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(a, 4), nibble), eight);
            const __m512i b_hi = _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(b, 4), nibble), eight);
            _mm512_store_si512(tile + 64 * (2 * c), _mm512_permutex2var_epi8(a_lo, half0, b_lo));
            _mm512_store_si512(tile + 64 * (2 * c + 1), _mm512_permutex2var_epi8(a_lo, half1, b_lo));
            _mm512_store_si512(tile + 64 * (4 + 2 * c), _mm512_permutex2var_epi8(a_hi, half0, b_hi));
            _mm512_store_si512(tile + 64 * (5 + 2 * c), _mm512_permutex2var_epi8(a_hi, half1, b_hi));
        }
    }
};

struct Q8_0Tiles {
    static constexpr size_t kUnitBytes = kQ8_0R8UnitBytes;
    // Chunk c is columns 8c..8c+7: tile rows 2c and 2c + 1.
    static void unpack(const uint8_t* u0, const uint8_t* u1, uint8_t* tile, __m512i half0, __m512i half1) {
        for (int c = 0; c < 4; ++c) {
            const __m512i a = _mm512_loadu_si512(u0 + 16 + 64 * c);
            const __m512i b = _mm512_loadu_si512(u1 + 16 + 64 * c);
            _mm512_store_si512(tile + 64 * (2 * c), _mm512_permutex2var_epi8(a, half0, b));
            _mm512_store_si512(tile + 64 * (2 * c + 1), _mm512_permutex2var_epi8(a, half1, b));
        }
    }
};

// Two consecutive groups, every block, into `out` (n_blocks unpacked blocks).
template <class Kind>
void unpack_pair(const uint8_t* groups, int64_t n_blocks, uint8_t* out) {
    const __m512i half0 = chunk_half(0), half1 = chunk_half(1);
    const uint8_t* second = groups + size_t(n_blocks) * Kind::kUnitBytes;
    for (int64_t i = 0; i < n_blocks; ++i) {
        const uint8_t* u0 = groups + size_t(i) * Kind::kUnitBytes;
        const uint8_t* u1 = second + size_t(i) * Kind::kUnitBytes;
        uint8_t* block = out + size_t(i) * kUnpackedBlockBytes;
        Kind::unpack(u0, u1, block, half0, half1);
        _mm512_store_ps(reinterpret_cast<float*>(block + kWeightTileBytes), unit_scales(u0, u1));
    }
}

// Block i's sixteen tokens times sixteen rows into sums, on tiles 0, 2, 4 (kSet 0) or 1, 3, 5.
// (The intrinsics paste the tile number into the instruction: literals only.)
template <int kSet>
inline void multiply_block(const uint8_t* quants, size_t x_stride, const uint8_t* weights, int32_t* sums) {
    if constexpr (kSet == 0) {
        _tile_loadd(0, quants, long(x_stride));
        _tile_loadd(2, weights, 64);
        _tile_zero(4);
        _tile_dpbssd(4, 0, 2);
        _tile_stored(4, sums, 64);
    } else {
        _tile_loadd(1, quants, long(x_stride));
        _tile_loadd(3, weights, 64);
        _tile_zero(5);
        _tile_dpbssd(5, 1, 3);
        _tile_stored(5, sums, 64);
    }
}

// Sixteen tokens (x at the first) against an unpacked pair, dx[16i + t] token t's scale of block
// i: y[t * y_stride + r], r < 16. Software-pipelined: block i's sums are scaled while block i + 1
// is multiplied, so neither unit waits for the other's results.
void tile_product(int64_t n_blocks, const uint8_t* unpacked, const uint8_t* x, size_t x_stride, const float* dx,
                  float* y, size_t y_stride) {
    alignas(64) int32_t sums[2][kTileTokens * kTileRows];
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
    multiply_block<0>(quants(0), x_stride, weights(0), sums[0]);
    int64_t i = 1;
    for (; i + 2 <= n_blocks; i += 2) {
        multiply_block<1>(quants(i), x_stride, weights(i), sums[1]);
        scale(sums[0], i - 1);
        multiply_block<0>(quants(i + 1), x_stride, weights(i + 1), sums[0]);
        scale(sums[1], i);
    }
    if (i < n_blocks) {
        multiply_block<1>(quants(i), x_stride, weights(i), sums[1]);
        scale(sums[0], i - 1);
        scale(sums[1], i);
    } else {
        scale(sums[0], i - 1);
    }
    for (int t = 0; t < kTileTokens; ++t) _mm512_storeu_ps(y + size_t(t) * y_stride, acc[t]);
}

// n_groups consecutive groups against n_tokens tokens: pairs of groups on the tile unit, sixteen
// tokens at a time, each pair unpacked once for all of them; the tokens after the last full tile
// and a last odd group go to the AVX-512 kernel.
template <class Kind>
void gemm_groups(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x, size_t x_stride,
                 int64_t n_tokens, float* y, size_t y_stride,
                 void (*gemm)(int64_t, const void*, const uint8_t*, size_t, int64_t, float*, size_t)) {
    const int64_t n_blocks = n / kQK;
    const size_t group_bytes = size_t(n_blocks) * Kind::kUnitBytes;
    const auto* g = static_cast<const uint8_t*>(groups);
    const int64_t n_pairs = n_groups / 2, n_tiled = n_tokens / kTileTokens * kTileTokens;
    if (n_pairs > 0 && n_tiled > 0) {
        // Per thread, kept between calls: a task's pairs take a few hundred KiB at most.
        thread_local std::vector<uint8_t> scratch;
        const size_t pair_bytes = size_t(n_blocks) * kUnpackedBlockBytes;
        if (scratch.size() < size_t(n_pairs) * pair_bytes + 64) scratch.resize(size_t(n_pairs) * pair_bytes + 64);
        uint8_t* const unpacked = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(scratch.data()) + 63) & ~uintptr_t(63));
        for (int64_t p = 0; p < n_pairs; ++p)
            unpack_pair<Kind>(g + size_t(2 * p) * group_bytes, n_blocks, unpacked + size_t(p) * pair_bytes);
        thread_local std::vector<float> dx;  // a tile's token scales, block by block
        dx.resize(size_t(padded_blocks(n)) * kTileTokens);
        const TileConfig config;
        _tile_loadconfig(&config);
        for (int64_t t = 0; t < n_tiled; t += kTileTokens) {
            tile_scales(x + size_t(t) * x_stride, x_stride, n, dx.data());
            for (int64_t p = 0; p < n_pairs; ++p)
                tile_product(n_blocks, unpacked + size_t(p) * pair_bytes, x + size_t(t) * x_stride, x_stride, dx.data(),
                             y + size_t(t) * y_stride + size_t(p * kTileRows), y_stride);
        }
        _tile_release();
    }
    for (int64_t k = 0; k < n_groups; ++k) {
        const bool tiled = k < 2 * n_pairs;
        const int64_t t0 = tiled ? n_tiled : 0;
        if (t0 < n_tokens)
            gemm(n, g + size_t(k) * group_bytes, x + size_t(t0) * x_stride, x_stride, n_tokens - t0,
                 y + size_t(t0) * y_stride + size_t(k * kR8Rows), y_stride);
    }
}

void gemm_groups_q4_0(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x, size_t x_stride,
                      int64_t n_tokens, float* y, size_t y_stride) {
    gemm_groups<Q4_0Tiles>(n, groups, n_groups, x, x_stride, n_tokens, y, y_stride, avx512_kernels().gemm_q4_0_r8_q8_0);
}

void gemm_groups_q8_0(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x, size_t x_stride,
                      int64_t n_tokens, float* y, size_t y_stride) {
    gemm_groups<Q8_0Tiles>(n, groups, n_groups, x, x_stride, n_tokens, y, y_stride, avx512_kernels().gemm_q8_0_r8_q8_0);
}

}  // namespace

const KernelTable& amx_kernels() {
    static const KernelTable table = [] {
        KernelTable t = avx512_kernels();
        t.isa = "amx";
        t.q8_activation_bytes = q8_activation_bytes;
        t.prepare_q8_activation = prepare_q8_activation;
        t.gemm_groups_q4_0_r8_q8_0 = gemm_groups_q4_0;
        t.gemm_groups_q8_0_r8_q8_0 = gemm_groups_q8_0;
        return t;
    }();
    return table;
}

}  // namespace ember::tensor

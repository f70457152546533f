#pragma once
// What the AMX kernels share (r8_tiles_amx.cpp, q4_k_tiles_amx.cpp): the tile shapes, one block's
// tile product, and the driver that takes a task's groups in pairs, sixteen tokens at a time.
// Include only from files compiled with AMX flags.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/grouped_rows.h"
#include "tensor/kernels.h"
#include "tensor/x86/kernels_x86.h"

namespace ember::tensor::amx {

constexpr int kTileTokens = 16;
constexpr int kTileRows = 16;  // two groups
// A weight tile: 32 columns of sixteen rows as the tile unit reads them, row k of the tile
// holding columns 4k..4k+3 of each row in turn.
constexpr size_t kWeightTileBytes = 512;

// The tiles' shapes: 0, 1 sixteen tokens' 32 bytes; 2, 3 a weight tile; 4, 5 sixteen tokens'
// sixteen int32 sums. Two of each, so one block's sums are scaled while the next is multiplied.
struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {32, 32, 64, 64, 64, 64};
    uint8_t rows[16] = {16, 16, 8, 8, 16, 16};
};

// vpermt2b indices: byte 4n + j of a weight tile row from byte 8n + 4h + j of the two groups'
// eight-byte chunks (n < 8 the first group, n >= 8 the second, whose bytes come 64 later).
inline __m512i chunk_half(int h) {
    alignas(64) uint8_t idx[64];
    for (int i = 0; i < 64; ++i) idx[i] = uint8_t(8 * (i / 4) + 4 * h + i % 4);
    return _mm512_load_si512(idx);
}

// Two weight tile rows at `rows`, from the two groups' eight-byte chunks a (rows 0..7) and b
// (rows 8..15) of eight columns: the chunks' first four columns, then their last four.
inline void store_chunk_rows(uint8_t* rows, __m512i a, __m512i b, __m512i half0, __m512i half1) {
    _mm512_store_si512(rows, _mm512_permutex2var_epi8(a, half0, b));
    _mm512_store_si512(rows + 64, _mm512_permutex2var_epi8(a, half1, b));
}

// Sixteen tokens' 32 quants (x_stride apart) times a weight tile into sums[t * 16 + r], on tiles
// 0, 2, 4 (kSet 0) or 1, 3, 5. (The intrinsics paste the tile number into the instruction:
// literals only.)
template <int kSet>
inline void multiply_block(const void* quants, size_t x_stride, const uint8_t* weights, int32_t* sums) {
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

// Units 0..n-1 (n >= 1) of sixteen tokens against sixteen rows: quants(i) the tokens' 32 quants
// of unit i (x_stride apart), weights(i) its weight tile, scale(sums, i) what is done with its
// int32 sums. Software-pipelined: unit i's sums are scaled while unit i + 1 is multiplied, so
// neither the tile unit nor the vector unit waits for the other's results.
template <class Quants, class Weights, class Scale>
inline void pipelined(int64_t n, size_t x_stride, Quants quants, Weights weights, Scale scale) {
    alignas(64) int32_t sums[2][kTileTokens * kTileRows];
    multiply_block<0>(quants(0), x_stride, weights(0), sums[0]);
    int64_t i = 1;
    for (; i + 2 <= n; i += 2) {
        multiply_block<1>(quants(i), x_stride, weights(i), sums[1]);
        scale(sums[0], i - 1);
        multiply_block<0>(quants(i + 1), x_stride, weights(i + 1), sums[0]);
        scale(sums[1], i);
    }
    if (i < n) {
        multiply_block<1>(quants(i), x_stride, weights(i), sums[1]);
        scale(sums[0], i - 1);
        scale(sums[1], i);
    } else {
        scale(sums[0], i - 1);
    }
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

// A per-thread buffer of at least `bytes`, 64-byte aligned, kept between calls.
template <int kWhich>
uint8_t* scratch(size_t bytes) {
    thread_local std::vector<uint8_t> buffer;
    if (buffer.size() < bytes + 64) buffer.resize(bytes + 64);
    return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(buffer.data()) + 63) & ~uintptr_t(63));
}

using GemmEntry = decltype(KernelTable::gemm_q4_0_r8_q8_0);

// n_groups consecutive groups against n_tokens tokens: pairs of groups on the tile unit, sixteen
// tokens at a time, each pair unpacked once for all of them (Kind::unpack_pair), each sixteen
// tokens' scales gathered once for all pairs (Kind::tile_scales); the tokens after the last full
// sixteen and a last odd group go to the AVX-512 entry `gemm`.
template <class Kind>
void gemm_groups(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                 float* y, size_t y_stride, GemmEntry gemm) {
    const size_t group_bytes = size_t(n) / Kind::kUnitColumns * Kind::kUnitBytes;
    const auto* g = static_cast<const uint8_t*>(groups);
    const int64_t n_pairs = n_groups / 2, n_tiled = n_tokens / kTileTokens * kTileTokens;
    if (n_pairs > 0 && n_tiled > 0) {
        const size_t pair_bytes = Kind::pair_bytes(n);
        uint8_t* const unpacked = scratch<0>(size_t(n_pairs) * pair_bytes);
        for (int64_t p = 0; p < n_pairs; ++p)
            Kind::unpack_pair(g + size_t(2 * p) * group_bytes, g + size_t(2 * p + 1) * group_bytes, n,
                              unpacked + size_t(p) * pair_bytes);
        auto* const scales = reinterpret_cast<float*>(scratch<1>(Kind::tile_scale_bytes(n)));
        const TileConfig config;
        _tile_loadconfig(&config);
        for (int64_t t = 0; t < n_tiled; t += kTileTokens) {
            Kind::tile_scales(x + size_t(t) * x_stride, x_stride, n, scales);
            for (int64_t p = 0; p < n_pairs; ++p)
                Kind::product(n, unpacked + size_t(p) * pair_bytes, x + size_t(t) * x_stride, x_stride, scales,
                              y + size_t(t) * y_stride + size_t(p * kTileRows), y_stride);
        }
        _tile_release();
    }
    for (int64_t k = 0; k < n_groups; ++k) {
        const int64_t t0 = k < 2 * n_pairs ? n_tiled : 0;
        if (t0 < n_tokens)
            gemm(n, g + size_t(k) * group_bytes, x + size_t(t0) * x_stride, x_stride, n_tokens - t0,
                 y + size_t(t0) * y_stride + size_t(k * kR8Rows), y_stride);
    }
}

// The kernel-table entry for Kind: gemm_groups with the AVX-512 table's gemm entry kGemm for what
// the tiles leave.
template <class Kind, GemmEntry KernelTable::*kGemm>
void entry(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x, size_t x_stride, int64_t n_tokens,
           float* y, size_t y_stride) {
    gemm_groups<Kind>(n, groups, n_groups, x, x_stride, n_tokens, y, y_stride, avx512_kernels().*kGemm);
}

}  // namespace ember::tensor::amx

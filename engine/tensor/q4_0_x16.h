#pragma once
// Q4_0 rows re-laid in memory for the AVX-512 dot products (DType::Q4_0_X16; never in a file).
// Each run of 16 blocks (288 bytes, as stored) becomes the 16 blocks' fp16 scales, then four
// 64-byte words: dword i of word k holds block i's quant bytes 4k..4k+3. One 512-bit load then
// meets sixteen blocks at once and each block's integer dot product stays in its own dword
// lane, so the kernel needs no byte shuffles and takes all sixteen scales from one vector
// conversion — the stored layout needs a shuffle per 72 bytes for both. A last run of m < 16
// blocks is laid out the same way with m lanes (2m bytes of scales, four words of 4m bytes).
// Sizes and the offsets of whole runs are those of the stored row.

#include <cstddef>
#include <cstdint>

namespace ember::tensor {

constexpr int64_t kX16Blocks = 16;
constexpr size_t kX16RunBytes = 288;

// Block i of a run of m blocks: its scale's and its quant word k's byte offsets in the run.
inline size_t x16_scale_offset(int64_t, int64_t i) { return size_t(2 * i); }
inline size_t x16_word_offset(int64_t m, int64_t i, int k) { return size_t(2 * m + 4 * m * k + 4 * i); }

// n values (a multiple of 32); in place.
void interleave_q4_0_row(uint8_t* row, int64_t n);
// The stored Q4_0 row again, into out (row_bytes(Q4_0, n) bytes; not overlapping row).
void q4_0_row_from_x16(const uint8_t* row, int64_t n, uint8_t* out);

}  // namespace ember::tensor

#pragma once
// Q4_K matrices re-laid in groups of eight rows for batched matrix products (DType::Q4_K_R8;
// never in a file). Group g holds rows 8g..8g+7 in the bytes those rows take as stored, as one
// 1152-byte unit per 256-column super-block i (the eight rows' block i):
//   [0, 16)      the eight rows' d (fp16), [16, 32) their dmin
//   [32, 96)     byte 8j + r: row r's scale j, low four bits, | its minimum j's low four bits << 4
//   [96, 128)    byte 8k + r (k < 4): the high two bits of row r's scale k, scale k + 4,
//                minimum k and minimum k + 4, in bit pairs from the lowest
//   [128, 1152)  byte 128 + 256p + 64c + 8r + b: row r's qs[32p + 8c + b]
// One 64-byte load then holds eight bytes of every row, so a dot product instruction meets eight
// rows at once with one broadcast activation, each row's sums stay in their own lanes, and the
// 64 scales and 64 minimums unpack with a few vector operations instead of once per row.

#include <cstddef>
#include <cstdint>

namespace ember::tensor {

constexpr int64_t kR8Rows = 8;
constexpr size_t kR8UnitBytes = 1152;  // eight 144-byte Q4_K blocks

// Eight stored Q4_K rows of n values (a multiple of 256) at `rows`, re-laid in place.
void group_q4_k_rows(uint8_t* rows, int64_t n);
// Row r (0..7) of a group as stored, into out (row_bytes(Q4_K, n) bytes, not overlapping).
void q4_k_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out);

}  // namespace ember::tensor

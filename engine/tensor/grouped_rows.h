#pragma once
// Q4_0, Q8_0, Q4_K, Q5_K and Q6_K matrices re-laid in groups of eight rows for whole-matrix
// products (DType::Q4_0_R8, Q8_0_R8, Q4_K_R8, Q5_K_R8, Q6_K_R8; never in a file). Group g holds
// rows 8g..8g+7 in the bytes those rows take as stored, as one unit per block column: a 64-byte
// load then holds eight quant bytes of every row, which one broadcast activation meets for all
// eight rows at once, each row's sums in their own lanes, and a unit's scales are read for eight
// rows together.
//
// Q4_0_R8, one 144-byte unit per 32-column block i (the eight rows' block i):
//   [0, 16)      the eight rows' d (fp16)
//   [16, 144)    byte 16 + 64c + 8r + b: row r's qs[8c + b], c = 0, 1 (low nibbles meet
//                activation bytes 8c..8c+7, high nibbles 16+8c..16+8c+7)
//
// Q8_0_R8, one 272-byte unit per 32-column block i:
//   [0, 16)      the eight rows' d (fp16)
//   [16, 272)    byte 16 + 64c + 8r + b: row r's qs[8c + b], c < 4
//
// Q4_K_R8, one 1152-byte unit per 256-column super-block i:
//   [0, 16)      the eight rows' d (fp16), [16, 32) their dmin
//   [32, 96)     byte 8j + r: row r's scale j, low four bits, | its minimum j's low four bits << 4
//   [96, 128)    byte 8k + r (k < 4): the high two bits of row r's scale k, scale k + 4,
//                minimum k and minimum k + 4, in bit pairs from the lowest
//   [128, 1152)  byte 128 + 256p + 64c + 8r + b: row r's qs[32p + 8c + b]
// (the 64 scales and 64 minimums then unpack with a few vector operations, not once per row).
//
// Q5_K_R8, one 1408-byte unit per 256-column super-block i: a Q4_K_R8 unit of the rows' d, dmin,
// scales, minimums and low four bits, then
//   [1152, 1408) byte 1152 + 64c + 8r + b: row r's qh[8c + b] (c < 4), whose bit 2p is the fifth
//                bit of the low nibble of qs[32p + 8c + b], bit 2p + 1 that of its high nibble
//
// Q6_K_R8, one 1680-byte unit per 256-column super-block i:
//   [0, 16)      the eight rows' d (fp16)
//   [16, 144)    byte 16 + 8g + r: row r's scale g (int8, g < 16)
//   [144, 1168)  byte 144 + 64c + 8r + b: row r's ql[8c + b] (c < 16)
//   [1168, 1680) byte 1168 + 64c + 8r + b: row r's qh[8c + b] (c < 8)

#include <cstddef>
#include <cstdint>
#include <optional>

#include "tensor/dtype.h"

namespace ember::tensor {

constexpr int64_t kR8Rows = 8;
constexpr size_t kQ4_0R8UnitBytes = 144;   // eight 18-byte Q4_0 blocks
constexpr size_t kQ8_0R8UnitBytes = 272;   // eight 34-byte Q8_0 blocks
constexpr size_t kQ4_KR8UnitBytes = 1152;  // eight 144-byte Q4_K blocks
constexpr size_t kQ5_KR8UnitBytes = 1408;  // eight 176-byte Q5_K blocks
constexpr size_t kQ5_KR8High = 1152;
constexpr size_t kQ6_KR8UnitBytes = 1680;  // eight 210-byte Q6_K blocks
constexpr size_t kQ6_KR8Scales = 16, kQ6_KR8Low = 144, kQ6_KR8High = 1168;

// Eight stored rows of n values at `rows`, re-laid in place.
void group_q4_0_rows(uint8_t* rows, int64_t n);
void group_q8_0_rows(uint8_t* rows, int64_t n);
void group_q4_k_rows(uint8_t* rows, int64_t n);
void group_q5_k_rows(uint8_t* rows, int64_t n);
void group_q6_k_rows(uint8_t* rows, int64_t n);
// Row r (0..7) of a group as stored, into out (row_bytes(stored type, n) bytes, not overlapping).
void q4_0_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out);
void q8_0_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out);
void q4_k_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out);
void q5_k_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out);
void q6_k_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out);

// How a stored type is grouped: its grouped type, the re-layout of eight rows, and a row back.
struct Grouping {
    DType grouped;
    void (*group)(uint8_t* rows, int64_t n);
    void (*row_from)(const uint8_t* group, int64_t n, int r, uint8_t* out);
};
// For a stored type with a grouped layout (Q4_0, Q8_0, Q4_K, Q5_K, Q6_K) or that grouped type;
// else nullopt.
std::optional<Grouping> grouping(DType t);

}  // namespace ember::tensor

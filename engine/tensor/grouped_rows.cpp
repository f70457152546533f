#include "tensor/grouped_rows.h"

#include <cstring>
#include <vector>

#include "tensor/quant_blocks.h"

namespace ember::tensor {
namespace {

size_t q4_0_quant_offset(int c, int r) { return size_t(16 + 64 * c + 8 * r); }

constexpr size_t kScaleLow = 32, kScaleHigh = 96, kQuants = 128;

size_t q4_k_quant_offset(int p, int c, int r) { return kQuants + size_t(256 * p + 64 * c + 8 * r); }

// The 12 packed scale bytes of a Q4_K block from eight scales and eight minimums, the inverse of
// k_scales_and_mins.
void pack_scales_and_mins(const uint8_t* sc, const uint8_t* m, uint8_t* packed) {
    for (int j = 0; j < 4; ++j) {
        packed[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        packed[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
        packed[j + 8] = uint8_t((sc[j + 4] & 15) | ((m[j + 4] & 15) << 4));
    }
}

// Eight stored rows of n values re-laid in place, one unit of eight blocks per block column:
// place(unit, r, block) writes row r's block into the unit.
template <typename Block, typename Place>
void group_rows(uint8_t* rows, int64_t n, int64_t block_values, Place place) {
    const int64_t n_blocks = n / block_values;
    const size_t row_bytes = size_t(n_blocks) * sizeof(Block);
    const std::vector<uint8_t> stored(rows, rows + kR8Rows * row_bytes);
    for (int64_t i = 0; i < n_blocks; ++i)
        for (int r = 0; r < kR8Rows; ++r) {
            Block b;
            std::memcpy(&b, stored.data() + size_t(r) * row_bytes + size_t(i) * sizeof(Block), sizeof b);
            place(rows + size_t(i) * kR8Rows * sizeof(Block), r, b);
        }
}

// Row r's `count` bytes of a block in their eight-byte chunks at unit + at (64 bytes apart), and back.
void to_chunks(const uint8_t* from, int count, uint8_t* unit, size_t at, int r) {
    for (int c = 0; c < count / 8; ++c) std::memcpy(unit + at + size_t(64 * c + 8 * r), from + 8 * c, 8);
}
void from_chunks(const uint8_t* unit, size_t at, int r, int count, uint8_t* to) {
    for (int c = 0; c < count / 8; ++c) std::memcpy(to + 8 * c, unit + at + size_t(64 * c + 8 * r), 8);
}

}  // namespace

void group_q4_0_rows(uint8_t* rows, int64_t n) {
    group_rows<BlockQ4_0>(rows, n, kQK, [](uint8_t* unit, int r, const BlockQ4_0& b) {
        std::memcpy(unit + 2 * r, &b.d, 2);
        for (int c = 0; c < 2; ++c) std::memcpy(unit + q4_0_quant_offset(c, r), b.qs + 8 * c, 8);
    });
}

void q4_0_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        const uint8_t* unit = group + size_t(i) * kQ4_0R8UnitBytes;
        BlockQ4_0 b;
        std::memcpy(&b.d, unit + 2 * r, 2);
        for (int c = 0; c < 2; ++c) std::memcpy(b.qs + 8 * c, unit + q4_0_quant_offset(c, r), 8);
        std::memcpy(out + size_t(i) * sizeof(BlockQ4_0), &b, sizeof b);
    }
}

namespace {

// Row r's d, dmin, scales, minimums and quants of a Q4_K or Q5_K block into a Q4_K_R8-shaped unit.
template <typename Block>
void place_k4(uint8_t* unit, int r, const Block& b) {
    std::memcpy(unit + 2 * r, &b.d, 2);
    std::memcpy(unit + 16 + 2 * r, &b.dmin, 2);
    uint8_t sm[16];  // scales 0-7, minimums 8-15
    k_scales_and_mins(b.scales, sm);
    for (int j = 0; j < 8; ++j) unit[kScaleLow + 8 * j + r] = uint8_t((sm[j] & 15) | ((sm[8 + j] & 15) << 4));
    for (int k = 0; k < 4; ++k)
        unit[kScaleHigh + 8 * k + r] =
            uint8_t((sm[k] >> 4) | ((sm[k + 4] >> 4) << 2) | ((sm[8 + k] >> 4) << 4) | ((sm[12 + k] >> 4) << 6));
    for (int p = 0; p < 4; ++p)
        for (int c = 0; c < 4; ++c) std::memcpy(unit + q4_k_quant_offset(p, c, r), b.qs + 32 * p + 8 * c, 8);
}

// The inverse of place_k4.
template <typename Block>
void take_k4(const uint8_t* unit, int r, Block& b) {
    std::memcpy(&b.d, unit + 2 * r, 2);
    std::memcpy(&b.dmin, unit + 16 + 2 * r, 2);
    uint8_t sc[8], m[8];
    for (int j = 0; j < 8; ++j) {
        const uint8_t low = unit[kScaleLow + 8 * j + r], high = unit[kScaleHigh + 8 * (j % 4) + r];
        const int shift = j < 4 ? 0 : 2;
        sc[j] = uint8_t((low & 15) | (((high >> shift) & 3) << 4));
        m[j] = uint8_t((low >> 4) | (((high >> (shift + 4)) & 3) << 4));
    }
    pack_scales_and_mins(sc, m, b.scales);
    for (int p = 0; p < 4; ++p)
        for (int c = 0; c < 4; ++c) std::memcpy(b.qs + 32 * p + 8 * c, unit + q4_k_quant_offset(p, c, r), 8);
}

}  // namespace

void group_q8_0_rows(uint8_t* rows, int64_t n) {
    group_rows<BlockQ8_0>(rows, n, kQK, [](uint8_t* unit, int r, const BlockQ8_0& b) {
        std::memcpy(unit + 2 * r, &b.d, 2);
        to_chunks(reinterpret_cast<const uint8_t*>(b.qs), kQK, unit, 16, r);
    });
}

void q8_0_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out) {
    for (int64_t i = 0; i < n / kQK; ++i) {
        const uint8_t* unit = group + size_t(i) * kQ8_0R8UnitBytes;
        BlockQ8_0 b;
        std::memcpy(&b.d, unit + 2 * r, 2);
        from_chunks(unit, 16, r, kQK, reinterpret_cast<uint8_t*>(b.qs));
        std::memcpy(out + size_t(i) * sizeof(BlockQ8_0), &b, sizeof b);
    }
}

void group_q4_k_rows(uint8_t* rows, int64_t n) {
    group_rows<BlockQ4_K>(rows, n, kQK_K, [](uint8_t* unit, int r, const BlockQ4_K& b) { place_k4(unit, r, b); });
}

void q4_k_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out) {
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        BlockQ4_K b;
        take_k4(group + size_t(i) * kQ4_KR8UnitBytes, r, b);
        std::memcpy(out + size_t(i) * sizeof(BlockQ4_K), &b, sizeof b);
    }
}

void group_q5_k_rows(uint8_t* rows, int64_t n) {
    group_rows<BlockQ5_K>(rows, n, kQK_K, [](uint8_t* unit, int r, const BlockQ5_K& b) {
        place_k4(unit, r, b);
        to_chunks(b.qh, int(sizeof b.qh), unit, kQ5_KR8High, r);
    });
}

void q5_k_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out) {
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const uint8_t* unit = group + size_t(i) * kQ5_KR8UnitBytes;
        BlockQ5_K b;
        take_k4(unit, r, b);
        from_chunks(unit, kQ5_KR8High, r, int(sizeof b.qh), b.qh);
        std::memcpy(out + size_t(i) * sizeof(BlockQ5_K), &b, sizeof b);
    }
}

std::optional<Grouping> grouping(DType t) {
    switch (stored_type(t)) {
        case DType::Q4_0: return Grouping{DType::Q4_0_R8, group_q4_0_rows, q4_0_row_from_r8};
        case DType::Q8_0: return Grouping{DType::Q8_0_R8, group_q8_0_rows, q8_0_row_from_r8};
        case DType::Q4_K: return Grouping{DType::Q4_K_R8, group_q4_k_rows, q4_k_row_from_r8};
        case DType::Q5_K: return Grouping{DType::Q5_K_R8, group_q5_k_rows, q5_k_row_from_r8};
        case DType::Q6_K: return Grouping{DType::Q6_K_R8, group_q6_k_rows, q6_k_row_from_r8};
        default: return std::nullopt;
    }
}

void group_q6_k_rows(uint8_t* rows, int64_t n) {
    group_rows<BlockQ6_K>(rows, n, kQK_K, [](uint8_t* unit, int r, const BlockQ6_K& b) {
        std::memcpy(unit + 2 * r, &b.d, 2);
        for (int g = 0; g < 16; ++g) std::memcpy(unit + kQ6_KR8Scales + 8 * g + r, &b.scales[g], 1);
        to_chunks(b.ql, int(sizeof b.ql), unit, kQ6_KR8Low, r);
        to_chunks(b.qh, int(sizeof b.qh), unit, kQ6_KR8High, r);
    });
}

void q6_k_row_from_r8(const uint8_t* group, int64_t n, int r, uint8_t* out) {
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const uint8_t* unit = group + size_t(i) * kQ6_KR8UnitBytes;
        BlockQ6_K b;
        std::memcpy(&b.d, unit + 2 * r, 2);
        for (int g = 0; g < 16; ++g) std::memcpy(&b.scales[g], unit + kQ6_KR8Scales + 8 * g + r, 1);
        from_chunks(unit, kQ6_KR8Low, r, int(sizeof b.ql), b.ql);
        from_chunks(unit, kQ6_KR8High, r, int(sizeof b.qh), b.qh);
        std::memcpy(out + size_t(i) * sizeof(BlockQ6_K), &b, sizeof b);
    }
}

}  // namespace ember::tensor

#include "tensor/q4_0_x16.h"

#include <algorithm>
#include <cstring>

#include "tensor/quant_blocks.h"

namespace ember::tensor {

void interleave_q4_0_row(uint8_t* row, int64_t n) {
    const int64_t n_blocks = n / kQK;
    uint8_t run[kX16RunBytes];
    for (int64_t b0 = 0; b0 < n_blocks; b0 += kX16Blocks) {
        const int64_t m = std::min(kX16Blocks, n_blocks - b0);
        uint8_t* dst = row + size_t(b0) * sizeof(BlockQ4_0);
        std::memcpy(run, dst, size_t(m) * sizeof(BlockQ4_0));
        const auto* blocks = reinterpret_cast<const BlockQ4_0*>(run);
        for (int64_t i = 0; i < m; ++i) {
            std::memcpy(dst + x16_scale_offset(m, i), &blocks[i].d, 2);
            for (int k = 0; k < 4; ++k) std::memcpy(dst + x16_word_offset(m, i, k), blocks[i].qs + 4 * k, 4);
        }
    }
}

void q4_0_row_from_x16(const uint8_t* row, int64_t n, uint8_t* out) {
    const int64_t n_blocks = n / kQK;
    auto* blocks = reinterpret_cast<BlockQ4_0*>(out);
    for (int64_t b0 = 0; b0 < n_blocks; b0 += kX16Blocks) {
        const int64_t m = std::min(kX16Blocks, n_blocks - b0);
        const uint8_t* src = row + size_t(b0) * sizeof(BlockQ4_0);
        for (int64_t i = 0; i < m; ++i) {
            std::memcpy(&blocks[b0 + i].d, src + x16_scale_offset(m, i), 2);
            for (int k = 0; k < 4; ++k) std::memcpy(blocks[b0 + i].qs + 4 * k, src + x16_word_offset(m, i, k), 4);
        }
    }
}

}  // namespace ember::tensor

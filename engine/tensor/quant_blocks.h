#pragma once
// Block layouts, bit-exact with GGUF (docs/FORMATS.md §5).

#include <cstdint>

namespace ember::tensor {

constexpr int kQK = 32;     // Q4_0 / Q8_0 block
constexpr int kQK_K = 256;  // k-quant super-block

struct BlockQ4_0 {
    uint16_t d;       // fp16 scale
    uint8_t qs[16];   // low nibbles: elements 0..15, high nibbles: 16..31, stored +8
};
static_assert(sizeof(BlockQ4_0) == 18);

struct BlockQ8_0 {
    uint16_t d;       // fp16 scale
    int8_t qs[32];
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ6_K {
    uint8_t ql[128];  // low 4 bits
    uint8_t qh[64];   // high 2 bits
    int8_t scales[16];
    uint16_t d;       // fp16 super-block scale
};
static_assert(sizeof(BlockQ6_K) == 210);

struct BlockQ8_K {
    float d;
    int8_t qs[256];
    int16_t bsums[16];  // sums of groups of 16 qs
};
static_assert(sizeof(BlockQ8_K) == 292);

}  // namespace ember::tensor

#pragma once
// Block layouts, bit-exact with GGUF (docs/FORMATS.md §5).

#include <cstdint>
#include <cstring>

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

// Q4_1 / Q5_0 / Q5_1 / IQ4_NL: blocks of 32 like Q4_0. Stored quants are unsigned; the high
// bits of Q5 quants sit in qh (bit j for element j).
struct BlockQ4_1 {
    uint16_t d, m;    // fp16 scale and minimum: x = d·q + m
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ4_1) == 20);

struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[16];   // x = d·(q - 16)
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[16];   // x = d·q + m
};
static_assert(sizeof(BlockQ5_1) == 24);

// The 16 non-uniform levels IQ4_NL and IQ4_XS index (GGUF's kvalues_iq4nl).
constexpr int8_t kIq4Levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

struct BlockIQ4_NL {
    uint16_t d;
    uint8_t qs[16];   // x = d·kIq4Levels[q]
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// K-quants: super-blocks of 256 with per-sub-block scales (and minimums) quantized again.
struct BlockQ2_K {
    uint8_t scales[16];  // per 16 elements: low nibble scale, high nibble minimum
    uint8_t qs[64];      // 2-bit quants
    uint16_t d, dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

struct BlockQ3_K {
    uint8_t hmask[32];   // high bit of each quant
    uint8_t qs[64];      // low 2 bits
    uint8_t scales[12];  // 16 six-bit scales, stored +32
    uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// Q4_K and Q5_K share the 12-byte packing of eight 6-bit scales and eight 6-bit minimums.
constexpr int kKScaleBytes = 12;

struct BlockQ4_K {
    uint16_t d, dmin;
    uint8_t scales[kKScaleBytes];
    uint8_t qs[128];     // sub-block pairs: low nibbles the first 32, high nibbles the next 32
};
static_assert(sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
    uint16_t d, dmin;
    uint8_t scales[kKScaleBytes];
    uint8_t qh[32];      // fifth bit: bit 2k of qh[l] for sub-block 2k, bit 2k+1 for 2k+1
    uint8_t qs[128];
};
static_assert(sizeof(BlockQ5_K) == 176);

struct BlockIQ4_XS {
    uint16_t d;
    uint16_t scales_h;   // high 2 bits of the eight 6-bit scales
    uint8_t scales_l[4]; // low 4 bits, two per byte
    uint8_t qs[128];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

// Sub-block j's 6-bit scale and minimum from a Q4_K/Q5_K scale array.
inline void k_scale_min(int j, const uint8_t* q, int& scale, int& min) {
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Element l (< 32) of sub-block j of a Q4_K or Q5_K block: its nibble, and for Q5_K the fifth
// bit from qh.
inline int k_quant(const BlockQ4_K& b, int j, int l) {
    const uint8_t q = b.qs[32 * (j / 2) + l];
    return j % 2 ? q >> 4 : q & 0xF;
}
inline int k_quant(const BlockQ5_K& b, int j, int l) {
    const uint8_t q = b.qs[32 * (j / 2) + l];
    return (j % 2 ? q >> 4 : q & 0xF) | (((b.qh[l] >> j) & 1) << 4);
}

// All eight 6-bit scales (out[0..7]) and minimums (out[8..15]) of a Q4_K/Q5_K block at once,
// as k_scale_min gives them one by one.
inline void k_scales_and_mins(const uint8_t* packed, uint8_t* out) {
    uint32_t u[4];
    std::memcpy(u, packed, 12);
    constexpr uint32_t low6 = 0x3f3f3f3f, low4 = 0x0f0f0f0f, low2 = 0x03030303;
    u[3] = ((u[2] >> 4) & low4) | (((u[1] >> 6) & low2) << 4);
    const uint32_t mins_low = u[1] & low6;
    u[1] = (u[2] & low4) | (((u[0] >> 6) & low2) << 4);
    u[2] = mins_low;
    u[0] &= low6;
    std::memcpy(out, u, 16);
}

// Q3_K's sixteen scales, unpacked and with the +32 removed.
inline void q3_k_scales(const uint8_t* packed, int8_t* out) {
    for (int j = 0; j < 16; ++j) {
        const int low = j < 8 ? (packed[j] & 0xF) : (packed[j - 8] >> 4);
        const int high = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
        out[j] = int8_t((low | (high << 4)) - 32);
    }
}

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

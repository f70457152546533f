#pragma once
// IEEE half and bfloat16 conversions (round to nearest even), portable scalar versions.

#include <cstdint>
#include <cstring>

namespace ember::tensor {

inline float bits_to_f32(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline uint32_t f32_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

inline float fp16_to_f32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1F;
    const uint32_t man = h & 0x3FF;
    if (exp == 0) {
        if (man == 0) return bits_to_f32(sign);
        // Subnormal half: value = man * 2^-24.
        float v = float(man) * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    if (exp == 31) return bits_to_f32(sign | 0x7F800000u | (man << 13));
    return bits_to_f32(sign | ((exp + 112) << 23) | (man << 13));
}

inline uint16_t f32_to_fp16(float f) {
    const uint32_t x = f32_to_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000;
    const uint32_t abs = x & 0x7FFFFFFF;
    if (abs > 0x7F800000u) return uint16_t(sign | 0x7E00);  // NaN
    if (abs >= 0x477FF000u) return uint16_t(sign | 0x7C00);  // overflow (rounds to inf)
    if (abs < 0x38800000u) {
        // Result is subnormal or zero: scale into the subnormal range and round to even.
        const float a = bits_to_f32(abs);
        const float scaled = a * 16777216.0f;  // units of 2^-24
        uint32_t m = uint32_t(scaled);
        const float rem = scaled - float(m);
        if (rem > 0.5f || (rem == 0.5f && (m & 1))) ++m;
        return uint16_t(sign | m);
    }
    uint32_t rounded = abs + 0x0FFF + ((abs >> 13) & 1);  // round to nearest even at bit 13
    return uint16_t(sign | (((rounded >> 13) - (112u << 10)) & 0x7FFF));
}

inline float bf16_to_f32(uint16_t h) { return bits_to_f32(uint32_t(h) << 16); }

inline uint16_t f32_to_bf16(float f) {
    uint32_t x = f32_to_bits(f);
    if ((x & 0x7FFFFFFF) > 0x7F800000u) return uint16_t((x >> 16) | 0x40);  // keep NaN a NaN
    x += 0x7FFF + ((x >> 16) & 1);
    return uint16_t(x >> 16);
}

}  // namespace ember::tensor

#pragma once
// The sampler's random source: xoshiro256** (Blackman & Vigna), its 256-bit state filled
// from the 64-bit seed by splitmix64 as the authors recommend. Self-contained so a seed
// reproduces a run on every platform and standard library (std::mt19937 would, but
// std::uniform_real_distribution is not specified bit-exactly).

#include <cstdint>

namespace ember::sampling {

class Rng {
public:
    explicit Rng(uint64_t seed = 0) { seed_with(seed); }

    void seed_with(uint64_t seed) {
        uint64_t x = seed;
        for (uint64_t& word : s_) {
            // splitmix64 step
            x += 0x9E3779B97F4A7C15ull;
            uint64_t z = x;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            word = z ^ (z >> 31);
        }
    }

    uint64_t next() {
        const uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    // Uniform in [0, 1): the top 53 bits as a double's mantissa.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

    uint64_t s_[4];
};

}  // namespace ember::sampling

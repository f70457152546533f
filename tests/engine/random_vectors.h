#pragma once
// Reproducible test inputs: n values from N(0, 1) for a seed.

#include <cstdint>
#include <random>
#include <vector>

namespace test_helpers {

inline std::vector<float> random_vector(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

}  // namespace test_helpers

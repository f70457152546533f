#include "tensor/rope.h"

#include <cmath>

namespace ember::tensor {

void rope_angles(int32_t pos, int32_t head_dim, float freq_base, float freq_scale, const float* factors, float* angles) {
    // Built by repeated multiplication as GGML does, so the angles round the same way as the
    // reference implementation's.
    const float theta_scale = std::pow(freq_base, -2.0f / float(head_dim));
    const int32_t half = head_dim / 2;
    float theta = float(pos) * freq_scale;
    float base = float(pos);
    for (int32_t j = 0; j < half; ++j) {
        // With factors GGML divides the unscaled angle first, then scales it.
        const float t = factors ? freq_scale * (base / factors[j]) : theta;
        angles[j] = std::cos(t);
        angles[half + j] = std::sin(t);
        theta *= theta_scale;
        base *= theta_scale;
    }
}

void rope_rotate(float* x, int32_t n_heads, int32_t head_dim, const float* angles, RopePairs pairs) {
    const int32_t half = head_dim / 2;
    const int32_t stride = pairs == RopePairs::Adjacent ? 2 : 1;
    const int32_t offset = pairs == RopePairs::Adjacent ? 1 : half;
    for (int32_t h = 0; h < n_heads; ++h) {
        float* xh = x + size_t(h) * size_t(head_dim);
        for (int32_t j = 0; j < half; ++j) {
            float& a = xh[stride * j];
            float& b = xh[stride * j + offset];
            const float x0 = a, x1 = b, c = angles[j], s = angles[half + j];
            a = x0 * c - x1 * s;
            b = x0 * s + x1 * c;
        }
    }
}

}  // namespace ember::tensor

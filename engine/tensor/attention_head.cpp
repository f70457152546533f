#include "tensor/attention_head.h"

#include <algorithm>
#include <cmath>

#include "tensor/fp16.h"
#include "tensor/kernels.h"

namespace ember::tensor {

void attend_head(const float* q, const uint16_t* k, const uint16_t* v, size_t stride, int32_t n_keys, int32_t head_dim,
                 float scale, uint16_t* half, float* scores, float* out, float softcap) {
    const KernelTable& kern = kernels();
    kern.f32_to_f16(q, half, head_dim);
    float max = -INFINITY;
    for (int32_t p = 0; p < n_keys; ++p) {
        scores[p] = kern.dot_f16(head_dim, k + size_t(p) * stride, half) * scale;
        if (softcap > 0.0f) scores[p] = softcap * std::tanh(scores[p] / softcap);
        max = std::max(max, scores[p]);
    }
    // exp of the shifted scores, each rounded through F16 before and after, a vector at a time.
    for (int32_t p = 0; p < n_keys; ++p) scores[p] -= max;
    kern.f32_to_f16(scores, half, n_keys);
    kern.f16_to_f32(half, scores, n_keys);
    for (int32_t p = 0; p < n_keys; ++p) scores[p] = std::exp(scores[p]);
    kern.f32_to_f16(scores, half, n_keys);
    kern.f16_to_f32(half, scores, n_keys);
    double sum = 0.0;
    for (int32_t p = 0; p < n_keys; ++p) sum += scores[p];
    const float inv = float(1.0 / sum);
    for (int32_t p = 0; p < n_keys; ++p) scores[p] *= inv;
    kern.f32_to_f16(scores, half, n_keys);
    kern.weighted_sum_f16(n_keys, half, v, stride, head_dim, out);
}

}  // namespace ember::tensor

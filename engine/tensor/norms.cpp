#include "tensor/norms.h"

#include <cmath>

namespace ember::tensor {

void rms_norm(const float* x, const float* w, float* out, int64_t n, int64_t n_tokens, float eps) {
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + t * n;
        float* ot = out + t * n;
        double sum = 0.0;
        // Squares in float, summed in double, as GGML does.
        for (int64_t i = 0; i < n; ++i) sum += double(xt[i] * xt[i]);
        const float scale = 1.0f / std::sqrt(float(sum / double(n)) + eps);
        for (int64_t i = 0; i < n; ++i) ot[i] = xt[i] * scale * w[i];
    }
}

void layer_norm(const float* x, const float* w, const float* b, float* out, int64_t n, int64_t n_tokens, float eps) {
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + t * n;
        float* ot = out + t * n;
        // Sums in double, as GGML does.
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) sum += double(xt[i]);
        const float mean = float(sum / double(n));
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            ot[i] = xt[i] - mean;
            sum2 += double(ot[i] * ot[i]);
        }
        const float scale = 1.0f / std::sqrt(float(sum2 / double(n)) + eps);
        for (int64_t i = 0; i < n; ++i) ot[i] = ot[i] * scale * w[i] + b[i];
    }
}

}  // namespace ember::tensor

#pragma once
// The sub-layer input normalizations, shared by the model's CPU path and the devices' twins of it.

#include <cstdint>

namespace ember::tensor {

// out = x / sqrt(mean(x²) + eps) * w, for n_tokens rows of n.
void rms_norm(const float* x, const float* w, float* out, int64_t n, int64_t n_tokens, float eps);

// out = (x - mean(x)) / sqrt(var(x) + eps) * w + b, for n_tokens rows of n.
void layer_norm(const float* x, const float* w, const float* b, float* out, int64_t n, int64_t n_tokens, float eps);

}  // namespace ember::tensor

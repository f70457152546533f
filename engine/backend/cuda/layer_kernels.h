#pragma once
// The kernels that keep a layer's attention sub-layer and its predictor on the device: the input
// norms, the activations prepared for the products, RoPE, the residual and ReLU. Every pointer is device memory;
// every launch is queued on `stream`.

#include <cstddef>
#include <cstdint>

#include "backend/cuda/gpu_runtime.h"
#include "tensor/dtype.h"

namespace ember::backend::gpu {

// out = RMSNorm (b null) or LayerNorm of each of n_tokens rows of n values, as tensor::rms_norm
// and tensor::layer_norm compute them (sums in double, over a fixed reduction tree).
void launch_norm(const float* x, const float* w, const float* b, float eps, int64_t n, int32_t n_tokens, float* out,
                 gpuStream_t stream);

// n_tokens rows of n values prepared for products with `weight` rows, activation_bytes apart:
// F16 values, or Q8_0 blocks for Q4_0 and Q8_0 weights.
void launch_prepare(tensor::DType weight, const float* x, int64_t n, int32_t n_tokens, uint8_t* out,
                    gpuStream_t stream);

// Rotates the n_heads heads of each of n_tokens rows (row_stride floats apart) by the token's
// angles (head_dim floats per token, tensor::rope_angles' layout).
void launch_rope(float* x, size_t row_stride, int32_t n_heads, int32_t head_dim, int32_t n_tokens, const float* angles,
                 bool neox, gpuStream_t stream);

// x[i] = max(x[i], 0) for i < n: the predictor's hidden layer.
void launch_relu(float* x, size_t n, gpuStream_t stream);

// out[i] = a[i] + b[i] for i < n.
void launch_add(const float* a, const float* b, size_t n, float* out, gpuStream_t stream);

}  // namespace ember::backend::gpu

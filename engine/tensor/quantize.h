#pragma once
// Row conversions between float and every supported type (reference implementations,
// bit-exact with llama.cpp's reference quantizers).

#include <cstdint>

#include "tensor/dtype.h"

namespace ember::tensor {

// dst receives n floats; n must be a multiple of block_size(t).
void dequantize_row(DType t, const void* src, float* dst, int64_t n);
// dst receives row_bytes(t, n) bytes.
void quantize_row(DType t, const float* src, void* dst, int64_t n);

void quantize_row_q4_0_ref(const float* x, void* y, int64_t n);
void quantize_row_q8_0_ref(const float* x, void* y, int64_t n);
void quantize_row_q5_0_ref(const float* x, void* y, int64_t n);
void quantize_row_q4_k_ref(const float* x, void* y, int64_t n);
void quantize_row_q5_k_ref(const float* x, void* y, int64_t n);
void quantize_row_q6_k_ref(const float* x, void* y, int64_t n);
// How Q8_K activations are scaled: upstream llama.cpp maps the largest magnitude to ∓127;
// PowerInfer's ggml, forked earlier, to ∓128. Each engine's outputs depend on its own.
enum class Q8KScale { Upstream, PowerInfer };
void quantize_row_q8_k_ref(const float* x, void* y, int64_t n, Q8KScale scale = Q8KScale::Upstream);

}  // namespace ember::tensor

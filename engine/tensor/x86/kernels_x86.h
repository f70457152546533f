#pragma once
#include "tensor/kernels.h"

namespace ember::tensor {
const KernelTable& avx2_kernels();
const KernelTable& avx512_kernels();
// Q8_0 activation quantization, shared by the AVX2 and AVX-512 tables.
void quantize_q8_0_avx2(const float* x, void* y, int64_t n);
// K-quant dot products (kquants_avx2.cpp, kquants_avx512.cpp).
float dot_q4_k_q8_k_avx2(int64_t n, const void* w, const void* x);
float dot_q5_k_q8_k_avx2(int64_t n, const void* w, const void* x);
float dot_q6_k_q8_k_avx2(int64_t n, const void* w, const void* x);
void dot_q4_k_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
void dot_q5_k_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
float dot_q4_k_q8_k_avx512(int64_t n, const void* w, const void* x);
float dot_q5_k_q8_k_avx512(int64_t n, const void* w, const void* x);
void dot_q4_k_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out);
void dot_q5_k_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out);
float dot_q6_k_q8_k_avx512(int64_t n, const void* w, const void* x);
void dot_q6_k_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out);
// Q4_K_R8 groups (q4_k_r8_avx512.cpp).
void gemm_q4_k_r8_q8_k_avx512(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
}

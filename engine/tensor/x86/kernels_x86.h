#pragma once
#include "tensor/kernels.h"

namespace ember::tensor {
const KernelTable& avx2_kernels();
const KernelTable& avx512_kernels();
// Q8_0 activation quantization, shared by the AVX2 and AVX-512 tables.
void quantize_q8_0_avx2(const float* x, void* y, int64_t n);
// K-quant dot products (kquants_avx2.cpp), shared by both tables.
float dot_q4_k_q8_k_avx2(int64_t n, const void* w, const void* x);
float dot_q5_k_q8_k_avx2(int64_t n, const void* w, const void* x);
float dot_q6_k_q8_k_avx2(int64_t n, const void* w, const void* x);
}

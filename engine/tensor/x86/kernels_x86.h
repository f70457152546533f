#pragma once
#include "tensor/kernels.h"

namespace ember::tensor {
const KernelTable& avx2_kernels();
const KernelTable& avx512_kernels();
// Q8_0 activation quantization, shared by the AVX2 and AVX-512 tables.
void quantize_q8_0_avx2(const float* x, void* y, int64_t n);
}

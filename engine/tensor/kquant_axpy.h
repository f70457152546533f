#pragma once
// y += a · row for K-quant rows: PowerInfer's transposed down rows (one row per neuron) in a
// K-quant file, added one active neuron at a time. The reference twins define the arithmetic
// every table reproduces bit for bit: per sub-block, s = a·(d·scale) and m = a·(dmin·min), then
// y = fma(s, q, y − m) (Q4_K, Q5_K) or y = fma(s, q − 32, y) (Q6_K).

#include <cstdint>

namespace ember::tensor {

void axpy_q4_k_ref(int64_t n, float a, const void* x, float* y);
void axpy_q5_k_ref(int64_t n, float a, const void* x, float* y);
void axpy_q6_k_ref(int64_t n, float a, const void* x, float* y);

}  // namespace ember::tensor

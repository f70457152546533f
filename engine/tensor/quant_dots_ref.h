#pragma once
// Scalar dot products of the GGUF weight types beyond Q4_0/Q8_0/Q6_K with their activation
// type (activation_type()): the reference every SIMD twin is checked against, and what a table
// without a twin uses. Each block's integer sums are exact; its float terms are added in block
// order.

#include <cstdint>

namespace ember::tensor {

float dot_q4_1_q8_0_ref(int64_t n, const void* w, const void* x);
float dot_q5_0_q8_0_ref(int64_t n, const void* w, const void* x);
float dot_q5_1_q8_0_ref(int64_t n, const void* w, const void* x);
float dot_iq4_nl_q8_0_ref(int64_t n, const void* w, const void* x);
float dot_q2_k_q8_k_ref(int64_t n, const void* w, const void* x);
float dot_q3_k_q8_k_ref(int64_t n, const void* w, const void* x);
float dot_q4_k_q8_k_ref(int64_t n, const void* w, const void* x);
float dot_q5_k_q8_k_ref(int64_t n, const void* w, const void* x);
float dot_iq4_xs_q8_k_ref(int64_t n, const void* w, const void* x);

}  // namespace ember::tensor

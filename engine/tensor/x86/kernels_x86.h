#pragma once
#include <type_traits>

#include "tensor/kernels.h"

namespace ember::tensor {
const KernelTable& avx2_kernels();
const KernelTable& avx512_kernels();
// The AVX-512 table with AMX tiles for grouped Q4_0, Q8_0, Q4_K and Q5_K batches (r8_tiles_amx.cpp,
// q4_k_tiles_amx.cpp).
const KernelTable& amx_kernels();
// The AMX table's Q4_K and Q5_K batch entries, set in t (q4_k_tiles_amx.cpp).
void add_k_quant_tiles(KernelTable& t);
// Q8_0 activation quantization, shared by the AVX2 and AVX-512 tables.
void quantize_q8_0_avx2(const float* x, void* y, int64_t n);
// The AVX2 table's activation row for Q4_0/Q8_0 weights: the Q8_0 blocks, then from the next
// 64-byte boundary (avx2_q8_extras_offset) each block's scale as a float, then each block's
// -8 · Σ x as an int32, which grouped Q4_0 rows need as their quants stay unsigned.
size_t avx2_q8_extras_offset(int64_t n);
// Grouped Q4_0, Q8_0, Q4_K, Q5_K and Q6_K rows (q4_0_r8_avx2.cpp, q4_k_r8_avx2.cpp,
// q6_k_r8_avx2.cpp).
void gemm_q4_0_r8_q8_0_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride);
void gemm_q4_k_r8_q8_k_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride);
void gemm_q6_k_r8_q8_k_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride);
void gemv4_q4_0_r8_q8_0_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
void gemm_q8_0_r8_q8_0_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride);
void gemv4_q8_0_r8_q8_0_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
void gemm_q5_k_r8_q8_k_avx2(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                            size_t y_stride);
void gemv4_q4_k_r8_q8_k_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
void gemv4_q5_k_r8_q8_k_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
void gemv4_q6_k_r8_q8_k_avx2(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
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
// The other weight types' dot products (other_quants_avx2.cpp).
float dot_q4_1_q8_0_avx2(int64_t n, const void* w, const void* x);
float dot_q5_0_q8_0_avx2(int64_t n, const void* w, const void* x);
float dot_q5_1_q8_0_avx2(int64_t n, const void* w, const void* x);
float dot_iq4_nl_q8_0_avx2(int64_t n, const void* w, const void* x);
float dot_q2_k_q8_k_avx2(int64_t n, const void* w, const void* x);
float dot_q3_k_q8_k_avx2(int64_t n, const void* w, const void* x);
float dot_iq4_xs_q8_k_avx2(int64_t n, const void* w, const void* x);
void dot_q4_1_q8_0_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
void dot_q5_0_q8_0_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
void dot_q5_1_q8_0_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
void dot_iq4_nl_q8_0_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
void dot_q2_k_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
void dot_q3_k_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
void dot_iq4_xs_q8_k_x4_avx2(int64_t n, const void* w, const void* const* x, float* out);
// IQ4_XS and Q2_K with VNNI (other_quants_avx512.cpp).
float dot_iq4_xs_q8_k_avx512(int64_t n, const void* w, const void* x);
void dot_iq4_xs_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out);
float dot_q2_k_q8_k_avx512(int64_t n, const void* w, const void* x);
void dot_q2_k_q8_k_x4_avx512(int64_t n, const void* w, const void* const* x, float* out);
// K-quant row axpys (kquant_axpy_avx2.cpp).
void axpy_q4_k_avx2(int64_t n, float a, const void* x, float* y);
void axpy_q5_k_avx2(int64_t n, float a, const void* x, float* y);
void axpy_q6_k_avx2(int64_t n, float a, const void* x, float* y);
// Q4_K_R8, Q5_K_R8 and Q6_K_R8 groups (q4_k_r8_avx512.cpp, q6_k_r8_avx512.cpp).
void gemm_q4_k_r8_q8_k_avx512(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
void gemm_q6_k_r8_q8_k_avx512(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
void gemm_q5_k_r8_q8_k_avx512(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
void gemv4_q4_k_r8_q8_k_avx512(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
void gemv4_q5_k_r8_q8_k_avx512(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
void gemv4_q6_k_r8_q8_k_avx512(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);

// Calls tile(t, std::integral_constant<int, T>{}) over n_tokens tokens: tiles of kLargest, then
// of four, then one of what is left (1-3), for kernels with a token count fixed at compile time.
template <int kLargest, typename Tile>
void for_each_tile(int64_t n_tokens, Tile tile) {
    int64_t t = 0;
    if constexpr (kLargest > 4)
        for (; t + kLargest <= n_tokens; t += kLargest) tile(t, std::integral_constant<int, kLargest>{});
    for (; t + 4 <= n_tokens; t += 4) tile(t, std::integral_constant<int, 4>{});
    switch (n_tokens - t) {
        case 3: tile(t, std::integral_constant<int, 3>{}); break;
        case 2: tile(t, std::integral_constant<int, 2>{}); break;
        case 1: tile(t, std::integral_constant<int, 1>{}); break;
        default: break;
    }
}

}

#pragma once
// CPU dot-product kernels. Each ISA fills a KernelTable; `kernels()` returns the best one for
// this CPU, chosen once at first use. The scalar reference table is always available and is
// what the SIMD tables are tested against.

#include <cstddef>
#include <cstdint>

#include "tensor/dtype.h"
#include "tensor/quantize.h"

namespace ember::tensor {

struct KernelTable {
    const char* isa;
    // Dot products of one weight row (first pointer) with one prepared activation row; n elements.
    float (*dot_f32)(int64_t n, const float* w, const float* x);
    float (*dot_f16)(int64_t n, const uint16_t* w, const uint16_t* x);
    float (*dot_bf16)(int64_t n, const uint16_t* w, const uint16_t* x);
    float (*dot_q4_0_q8_0)(int64_t n, const void* w, const void* x);
    float (*dot_q8_0_q8_0)(int64_t n, const void* w, const void* x);
    // Four Q4_0 rows against one activation: out[r] = dot_q4_0_q8_0(n, w[r], x), bit for bit.
    // For scattered rows (the sparse FFN's active neurons) four streams in flight keep more
    // cache misses outstanding than one row at a time, and the activation is loaded once.
    void (*dot4_q4_0_q8_0)(int64_t n, const void* const* w, const void* x, float* out);
    float (*dot_q6_k_q8_k)(int64_t n, const void* w, const void* x);
    // Activations for Q4_0/Q8_0 weights: Q8_0 blocks (bit-identical in every table), then
    // whatever extra layout this table's kernels read, so the work is done once per activation
    // row rather than once per weight row.
    size_t (*q8_activation_bytes)(int64_t n);
    void (*prepare_q8_activation)(const float* x, void* y, int64_t n);
    // Activations for K-quant weights: Q8_K blocks bit for bit as quantize_row_q8_k_ref writes them.
    void (*quantize_q8_k)(const float* x, void* y, int64_t n, Q8KScale scale);
    void (*f32_to_f16)(const float* x, uint16_t* y, int64_t n);
    // y += a * x over n elements of one weight row (attention's weighted sum of cached
    // values; the sparse FFN's down projection, one active neuron at a time).
    void (*axpy_f16)(int64_t n, float a, const uint16_t* x, float* y);
    void (*axpy_q4_0)(int64_t n, float a, const void* x, float* y);
    void (*axpy_q8_0)(int64_t n, float a, const void* x, float* y);
    // Eight rows in order, y += a[0]·x[0], then a[1]·x[1], …: bit-identical to eight axpy_q4_0
    // (axpy_q8_0) calls, with y read and written once instead of eight times.
    void (*axpy8_q4_0)(int64_t n, const float* a, const void* const* x, float* y);
    void (*axpy8_q8_0)(int64_t n, const float* a, const void* const* x, float* y);
    // Eight F16 rows the same way: bit-identical to eight of this table's axpy_f16 calls.
    void (*axpy8_f16)(int64_t n, const float* a, const void* const* x, float* y);
    // Up to eight tokens' sums of the same Q4_0 (Q8_0) rows (a prompt's transposed down
    // projection): for t < m, y[t][0, n) += Σ_j c[ids[j]·m + t] · row ids[j], row i at
    // base + i·row_bytes. Each sum starts from zero and takes the rows in order, one FMA per
    // element: bit for bit a zeroed buffer, one axpy_q4_0 (axpy_q8_0) per row, then the buffer
    // added to y[t]. Each row is read once for all m tokens.
    void (*axpy_tokens_q4_0)(int64_t n, const uint8_t* base, size_t row_bytes, const int32_t* ids, int64_t n_ids,
                             const float* c, int m, float* const* y);
    void (*axpy_tokens_q8_0)(int64_t n, const uint8_t* base, size_t row_bytes, const int32_t* ids, int64_t n_ids,
                             const float* c, int m, float* const* y);
    // K-quant rows (tensor/kquant_axpy.h), bit for bit the reference twins.
    void (*axpy_q4_k)(int64_t n, float a, const void* x, float* y);
    void (*axpy_q5_k)(int64_t n, float a, const void* x, float* y);
    void (*axpy_q6_k)(int64_t n, float a, const void* x, float* y);
    void (*f16_to_f32)(const uint16_t* x, float* y, int64_t n);
    // out[0, n) = Σ_p w[p] · x_p over n_rows F16 rows stride apart (attention's weighted sum of
    // cached values): bit for bit what zeroing out and one axpy_f16 per row, in order, give.
    void (*weighted_sum_f16)(int64_t n_rows, const uint16_t* w, const uint16_t* x, size_t stride, int64_t n, float* out);
    // Q4_0_X16 rows (tensor/q4_0_x16.h). Every table can compute with them; interleave_q4_0
    // says whether this table's kernels are faster on them, and only then does a model re-lay
    // its Q4_0 matrices at load.
    bool interleave_q4_0;
    float (*dot_q4_0x16_q8_0)(int64_t n, const void* w, const void* x);
    // Four rows, bit for bit as four dot_q4_0x16_q8_0 calls give them. Each row's bytes
    // `prefetch` ahead of where it is read are prefetched (0: none): for rows that run on in
    // memory, as a matrix's consecutive rows do, not for scattered ones.
    void (*dot4_q4_0x16_q8_0)(int64_t n, const void* const* w, const void* x, float* out, size_t prefetch);
    // The other GGUF weight types, each against its activation type (activation_type()): Q8_0
    // blocks for the 32-element types, Q8_K super-blocks for the K-quants and IQ4_XS.
    float (*dot_q4_1_q8_0)(int64_t n, const void* w, const void* x);
    float (*dot_q5_0_q8_0)(int64_t n, const void* w, const void* x);
    float (*dot_q5_1_q8_0)(int64_t n, const void* w, const void* x);
    float (*dot_iq4_nl_q8_0)(int64_t n, const void* w, const void* x);
    float (*dot_q2_k_q8_k)(int64_t n, const void* w, const void* x);
    float (*dot_q3_k_q8_k)(int64_t n, const void* w, const void* x);
    float (*dot_q4_k_q8_k)(int64_t n, const void* w, const void* x);
    float (*dot_q5_k_q8_k)(int64_t n, const void* w, const void* x);
    float (*dot_iq4_xs_q8_k)(int64_t n, const void* w, const void* x);
    // One K-quant row against four activation rows: out[t] = the single-row kernel's dot with
    // x[t], to float rounding. A batch reads and unpacks each weight row once per four tokens.
    void (*dot_q4_k_q8_k_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_q5_k_q8_k_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_q6_k_q8_k_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_q4_1_q8_0_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_q5_0_q8_0_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_q5_1_q8_0_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_iq4_nl_q8_0_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_q2_k_q8_k_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_q3_k_q8_k_x4)(int64_t n, const void* w, const void* const* x, float* out);
    void (*dot_iq4_xs_q8_k_x4)(int64_t n, const void* w, const void* const* x, float* out);
    // A group of eight grouped rows (tensor/grouped_rows.h) against n_tokens activation rows
    // x_stride bytes apart: y[t * y_stride + r] = row r's dot product with token t as the row
    // kernels give it, to float rounding. The group_* flags say whether this table's kernels for
    // a type beat its row kernels, and only then does a model re-lay its matrices at load.
    bool group_q4_0;
    bool group_q8_0;
    bool group_q4_k;
    bool group_q5_k;
    bool group_q6_k;
    void (*gemm_q4_0_r8_q8_0)(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
    void (*gemm_q8_0_r8_q8_0)(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
    void (*gemm_q4_k_r8_q8_k)(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
    void (*gemm_q5_k_r8_q8_k)(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
    void (*gemm_q6_k_r8_q8_k)(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                              float* y, size_t y_stride);
    // Four groups against one token, y[s][0..8) bit for bit as the type's gemm entry gives group
    // s: one token's product streams the matrix from memory, and four streams a quarter of a task
    // apart keep more misses in flight than one. Each stream's bytes `prefetch` ahead are
    // prefetched (0: none), as for dot4_q4_0x16_q8_0.
    void (*gemv4_q4_0_r8_q8_0)(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
    void (*gemv4_q8_0_r8_q8_0)(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
    void (*gemv4_q4_k_r8_q8_k)(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
    void (*gemv4_q5_k_r8_q8_k)(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
    void (*gemv4_q6_k_r8_q8_k)(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch);
    // n_groups consecutive groups against n_tokens tokens, as n_groups calls of the type's gemm
    // entry would give them: for tables with a matrix unit (AMX), which wants sixteen rows and
    // sixteen tokens at once and the weights unpacked once for every token; null elsewhere.
    void (*gemm_groups_q4_0_r8_q8_0)(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x,
                                     size_t x_stride, int64_t n_tokens, float* y, size_t y_stride);
    void (*gemm_groups_q8_0_r8_q8_0)(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x,
                                     size_t x_stride, int64_t n_tokens, float* y, size_t y_stride);
    void (*gemm_groups_q4_k_r8_q8_k)(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x,
                                     size_t x_stride, int64_t n_tokens, float* y, size_t y_stride);
    void (*gemm_groups_q5_k_r8_q8_k)(int64_t n, const void* groups, int64_t n_groups, const uint8_t* x,
                                     size_t x_stride, int64_t n_tokens, float* y, size_t y_stride);
};

// A grouped type's entries in a table (by its stored or grouped type): whether they beat the
// table's row kernels, the tile kernel, the four-group one-token kernel and the many-group batch
// kernel (null where the table has none). All null for a type without a grouped layout.
struct GroupedEntries {
    bool beats_rows;
    decltype(KernelTable::gemm_q4_0_r8_q8_0) gemm;
    decltype(KernelTable::gemv4_q4_0_r8_q8_0) gemv4;
    decltype(KernelTable::gemm_groups_q4_0_r8_q8_0) gemm_groups;
};
inline GroupedEntries grouped_entries(const KernelTable& k, DType t) {
    switch (stored_type(t)) {
        case DType::Q4_0: return {k.group_q4_0, k.gemm_q4_0_r8_q8_0, k.gemv4_q4_0_r8_q8_0, k.gemm_groups_q4_0_r8_q8_0};
        case DType::Q8_0: return {k.group_q8_0, k.gemm_q8_0_r8_q8_0, k.gemv4_q8_0_r8_q8_0, k.gemm_groups_q8_0_r8_q8_0};
        case DType::Q4_K: return {k.group_q4_k, k.gemm_q4_k_r8_q8_k, k.gemv4_q4_k_r8_q8_k, k.gemm_groups_q4_k_r8_q8_k};
        case DType::Q5_K: return {k.group_q5_k, k.gemm_q5_k_r8_q8_k, k.gemv4_q5_k_r8_q8_k, k.gemm_groups_q5_k_r8_q8_k};
        case DType::Q6_K: return {k.group_q6_k, k.gemm_q6_k_r8_q8_k, k.gemv4_q6_k_r8_q8_k, nullptr};
        default: return {false, nullptr, nullptr, nullptr};
    }
}

// Whether the table's grouped kernels for matrices of a stored type beat its row kernels.
inline bool groups_rows(const KernelTable& k, DType stored) { return grouped_entries(k, stored).beats_rows; }

// The four-token entries of a table without a fused kernel: four single calls.
template <float (*Dot)(int64_t, const void*, const void*)>
void dot_tokens4_by_calls(int64_t n, const void* w, const void* const* x, float* out) {
    for (int t = 0; t < 4; ++t) out[t] = Dot(n, w, x[t]);
}

// The four-row entries of a table without a fused kernel: four single-row calls, which is
// exactly what a fused kernel must equal.
template <float (*Dot)(int64_t, const void*, const void*)>
void dot4_by_rows(int64_t n, const void* const* w, const void* x, float* out) {
    for (int r = 0; r < 4; ++r) out[r] = Dot(n, w[r], x);
}

// The four-group entry of a table without a fused kernel: one single-token call per group.
template <void (*Gemm)(int64_t, const void*, const uint8_t*, size_t, int64_t, float*, size_t)>
void gemv4_by_groups(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t) {
    for (int s = 0; s < 4; ++s) Gemm(n, groups[s], x, 0, 1, y[s], 0);
}

template <void (*Axpy)(int64_t, float, const void*, float*)>
void axpy8_by_rows(int64_t n, const float* a, const void* const* x, float* y) {
    for (int r = 0; r < 8; ++r) Axpy(n, a[r], x[r], y);
}

// The same for a table's F16 row sum, whose rows are typed.
template <void (*Axpy)(int64_t, float, const uint16_t*, float*)>
void axpy8_f16_by_rows(int64_t n, const float* a, const void* const* x, float* y) {
    for (int r = 0; r < 8; ++r) Axpy(n, a[r], static_cast<const uint16_t*>(x[r]), y);
}

// The tokens' sums of a table without a fused kernel: one token and a piece of the row at a time.
// BlockBytes: the bytes of the rows' 32-value blocks.
template <void (*Axpy)(int64_t, float, const void*, float*), size_t BlockBytes>
void axpy_tokens_by_rows(int64_t n, const uint8_t* base, size_t row_bytes, const int32_t* ids, int64_t n_ids,
                         const float* c, int m, float* const* y) {
    constexpr int64_t kPiece = 256;  // whole Q4_0 blocks
    float sum[kPiece];
    for (int t = 0; t < m; ++t)
        for (int64_t col0 = 0; col0 < n; col0 += kPiece) {
            const int64_t len = n - col0 < kPiece ? n - col0 : kPiece;
            for (int64_t k = 0; k < len; ++k) sum[k] = 0.0f;
            for (int64_t j = 0; j < n_ids; ++j)
                Axpy(len, c[size_t(ids[j]) * size_t(m) + size_t(t)],
                     base + size_t(ids[j]) * row_bytes + size_t(col0) / 32 * BlockBytes, sum);
            for (int64_t k = 0; k < len; ++k) y[t][col0 + k] += sum[k];
        }
}

const KernelTable& reference_kernels();
#if defined(__aarch64__) && defined(__ARM_NEON)
const KernelTable& neon_kernels();  // kernels_neon.cpp
#endif
const KernelTable& kernels();
// Every table this CPU can run (reference first), for tests that check SIMD against scalar.
int available_kernel_count();
const KernelTable& available_kernels(int index);

}  // namespace ember::tensor

#pragma once
// The device's kernels: gathered row dot products (hot gate/up), the ordered down-projection
// sum, and the dense matrix product (attention, predictors, LM head), for F16, Q4_0 and Q8_0
// rows. Every pointer is device memory; every launch is queued on `stream`.

#include <cstddef>
#include <cstdint>

#include "backend/cuda/ffn_math.h"
#include "backend/cuda/gpu_runtime.h"
#include "tensor/dtype.h"

namespace ember::backend::gpu {

// The rows of one matrix resident on the device: row r at data + r * row_bytes.
struct DeviceRows {
    tensor::DType type{};
    const uint8_t* data = nullptr;
    size_t row_bytes = 0;
    int64_t n_cols = 0;
};

// Bytes of an activation row of n values in the dot-product type of `weight` rows, as the CPU
// prepares it (the plain Q8_0 blocks come first; any CPU-specific packing after them is not read).
size_t activation_bytes(tensor::DType weight, int64_t n);

// out[j] = rows[local[j]] · x for j < n. x is in the rows' activation type.
void launch_dots(const DeviceRows& rows, const uint8_t* x, const int32_t* local, int32_t n, float* out,
                 gpuStream_t stream);

// out[t * n_rows + r] = rows[r] · x row t, for r < n_rows and t < n_tokens; x holds n_tokens
// activation rows back to back (activation_bytes apart).
void launch_matmul(const DeviceRows& rows, int32_t n_rows, const uint8_t* x, int32_t n_tokens, float* out,
                   gpuStream_t stream);

// y (rows.n_cols) = Σ_j coef[j] · rows[local[j]], summed as down_chunks() says. partial holds
// down_chunks(n) * rows.n_cols floats.
void launch_down(const DeviceRows& rows, const int32_t* local, const float* coef, int32_t n, float* partial,
                 float* y, gpuStream_t stream);

// dst row dst_rows[j] = src row src_rows[j], for j < n; both buffers have rows of row_bytes.
void launch_copy_rows(uint8_t* dst, const int32_t* dst_rows, const uint8_t* src, const int32_t* src_rows,
                      int32_t n, size_t row_bytes, gpuStream_t stream);

}  // namespace ember::backend::gpu

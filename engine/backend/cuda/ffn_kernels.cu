#include "backend/cuda/kernel_prelude.h"

#include "backend/cuda/ffn_kernels.h"
#include "backend/cuda/ffn_math.h"

#include <string>

#include "common/error.h"

namespace ember::backend::gpu {
namespace {

using tensor::DType;

// A group of kLanes lanes computes one row's dot product. On CUDA it is a warp; on AMD it is a
// warp (RDNA wave32) or half a wavefront (wave64), reduced with width-32 shuffles either way.
constexpr int kRowsPerBlock = 8;
constexpr int kDownThreads = 256;

__device__ inline float lanes_sum(float v) {
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
#if defined(EMBER_HIP)
        v += __shfl_down(v, offset, kLanes);
#else
        v += __shfl_down_sync(0xffffffffu, v, offset);
#endif
    }
    return v;  // complete in lane 0
}

struct DotF16 {
    __device__ static float row(const uint8_t* w, const uint8_t* x, int64_t n, int lane) { return dot_f16_lane(w, x, n, lane); }
};
struct DotQ4_0 {
    __device__ static float row(const uint8_t* w, const uint8_t* x, int64_t n, int lane) { return dot_q4_0_lane(w, x, n, lane); }
};
struct DotQ8_0 {
    __device__ static float row(const uint8_t* w, const uint8_t* x, int64_t n, int lane) { return dot_q8_0_lane(w, x, n, lane); }
};

// Row j of block row blockIdx.y: out[t * n + j] = row(local ? local[j] : j) · x row t.
template <class Dot>
__global__ void dots_kernel(const uint8_t* rows, size_t row_bytes, int64_t n_cols, const uint8_t* x, size_t x_stride,
                            const int32_t* local, int32_t n, float* out) {
    const int lane = int(threadIdx.x) % kLanes;
    const int32_t j = int32_t(blockIdx.x) * kRowsPerBlock + int32_t(threadIdx.x) / kLanes;
    if (j >= n) return;  // the whole group leaves together, so the shuffles stay complete
    const size_t t = blockIdx.y;
    const int32_t r = local ? local[j] : j;
    const float acc = lanes_sum(Dot::row(rows + size_t(r) * row_bytes, x + t * x_stride, n_cols, lane));
    if (lane == 0) out[t * size_t(n) + size_t(j)] = acc;
}

struct ValueF16 {
    __device__ static float at(const uint8_t* w, int64_t c) { return value_f16(w, c); }
};
struct ValueQ4_0 {
    __device__ static float at(const uint8_t* w, int64_t c) { return value_q4_0(w, c); }
};
struct ValueQ8_0 {
    __device__ static float at(const uint8_t* w, int64_t c) { return value_q8_0(w, c); }
};

// Thread c of chunk k: partial[k][c] = Σ coef[j] · row(local[j])[c] over the chunk's j, in order.
// Neighbouring threads read neighbouring bytes of the same row.
template <class Value>
__global__ void down_kernel(const uint8_t* rows, size_t row_bytes, int64_t n_cols, const int32_t* local,
                            const float* coef, int32_t n, float* partial) {
    const int64_t c = int64_t(blockIdx.x) * kDownThreads + threadIdx.x;
    if (c >= n_cols) return;
    const int32_t first = int32_t(blockIdx.y) * kDownChunk;
    const int32_t last = min(n, first + kDownChunk);
    float acc = 0.0f;
    for (int32_t j = first; j < last; ++j) {
        const float a = coef[j];
        if (a == 0.0f) continue;  // ReLU zeros: the row is not read
        acc += a * Value::at(rows + size_t(local[j]) * row_bytes, c);
    }
    partial[int64_t(blockIdx.y) * n_cols + c] = acc;
}

__global__ void sum_chunks_kernel(const float* partial, int32_t chunks, int64_t n_cols, float* y) {
    const int64_t c = int64_t(blockIdx.x) * kDownThreads + threadIdx.x;
    if (c >= n_cols) return;
    float acc = 0.0f;
    for (int32_t k = 0; k < chunks; ++k) acc += partial[int64_t(k) * n_cols + c];
    y[c] = acc;
}

__global__ void copy_rows_kernel(uint8_t* dst, const int32_t* dst_rows, const uint8_t* src, const int32_t* src_rows,
                                 size_t row_bytes) {
    const uint8_t* s = src + size_t(src_rows[blockIdx.x]) * row_bytes;
    uint8_t* d = dst + size_t(dst_rows[blockIdx.x]) * row_bytes;
    for (size_t i = threadIdx.x; i < row_bytes; i += blockDim.x) d[i] = s[i];
}

[[noreturn]] void unsupported(DType t, const char* op) {
    fail(std::string(EMBER_GPU_API " device: no ") + op + " kernel for " + tensor::dtype_name(t) + " rows");
}

void launch_dot_grid(const DeviceRows& rows, const uint8_t* x, size_t x_stride, int32_t n_tokens, const int32_t* local,
                     int32_t n, float* out, gpuStream_t stream) {
    if (n == 0 || n_tokens == 0) return;
    const dim3 grid(blocks_for(n, kRowsPerBlock), unsigned(n_tokens)), block(kLanes * kRowsPerBlock);
    switch (rows.type) {
        case DType::F16:
            dots_kernel<DotF16><<<grid, block, 0, stream>>>(rows.data, rows.row_bytes, rows.n_cols, x, x_stride, local, n, out);
            break;
        case DType::Q4_0:
            dots_kernel<DotQ4_0><<<grid, block, 0, stream>>>(rows.data, rows.row_bytes, rows.n_cols, x, x_stride, local, n, out);
            break;
        case DType::Q8_0:
            dots_kernel<DotQ8_0><<<grid, block, 0, stream>>>(rows.data, rows.row_bytes, rows.n_cols, x, x_stride, local, n, out);
            break;
        default: unsupported(rows.type, "dot product");
    }
    check(gpuGetLastError(), "launching the dot-product kernel");
}

}  // namespace

void launch_dots(const DeviceRows& rows, const uint8_t* x, const int32_t* local, int32_t n, float* out,
                 gpuStream_t stream) {
    launch_dot_grid(rows, x, 0, 1, local, n, out, stream);
}

void launch_matmul(const DeviceRows& rows, int32_t n_rows, const uint8_t* x, int32_t n_tokens, float* out,
                   gpuStream_t stream) {
    launch_dot_grid(rows, x, activation_bytes(rows.type, rows.n_cols), n_tokens, nullptr, n_rows, out, stream);
}

void launch_down(const DeviceRows& rows, const int32_t* local, const float* coef, int32_t n, float* partial,
                 float* y, gpuStream_t stream) {
    const int32_t chunks = down_chunks(n);
    const unsigned col_blocks = blocks_for(rows.n_cols, kDownThreads);
    if (chunks > 0) {
        const dim3 grid(col_blocks, unsigned(chunks)), block(kDownThreads);
        switch (rows.type) {
            case DType::F16:
                down_kernel<ValueF16><<<grid, block, 0, stream>>>(rows.data, rows.row_bytes, rows.n_cols, local, coef, n, partial);
                break;
            case DType::Q4_0:
                down_kernel<ValueQ4_0><<<grid, block, 0, stream>>>(rows.data, rows.row_bytes, rows.n_cols, local, coef, n, partial);
                break;
            case DType::Q8_0:
                down_kernel<ValueQ8_0><<<grid, block, 0, stream>>>(rows.data, rows.row_bytes, rows.n_cols, local, coef, n, partial);
                break;
            default: unsupported(rows.type, "down-projection");
        }
        check(gpuGetLastError(), "launching the down-projection kernel");
    }
    sum_chunks_kernel<<<col_blocks, kDownThreads, 0, stream>>>(partial, chunks, rows.n_cols, y);
    check(gpuGetLastError(), "launching the down-projection sum");
}

void launch_copy_rows(uint8_t* dst, const int32_t* dst_rows, const uint8_t* src, const int32_t* src_rows, int32_t n,
                      size_t row_bytes, gpuStream_t stream) {
    if (n == 0) return;
    copy_rows_kernel<<<unsigned(n), 128, 0, stream>>>(dst, dst_rows, src, src_rows, row_bytes);
    check(gpuGetLastError(), "launching the row copy");
}

}  // namespace ember::backend::gpu

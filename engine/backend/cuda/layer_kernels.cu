#include "backend/cuda/kernel_prelude.h"

#include "backend/cuda/layer_kernels.h"
#include "backend/cuda/layer_math.h"

#include <string>

#include "backend/cuda/ffn_kernels.h"
#include "common/error.h"

namespace ember::backend::gpu {
namespace {

using tensor::DType;

// The sum of every thread's v over a fixed tree: the same bits every run.
__device__ double block_sum(double v, double* shared) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int width = kNormThreads / 2; width > 0; width /= 2) {
        if (int(threadIdx.x) < width) shared[threadIdx.x] += shared[threadIdx.x + width];
        __syncthreads();
    }
    const double result = shared[0];
    __syncthreads();
    return result;
}

// One block per token row.
__global__ void norm_kernel(const float* x, const float* w, const float* b, float eps, int64_t n, float* out) {
    __shared__ double shared[kNormThreads];
    const float* xt = x + size_t(blockIdx.x) * size_t(n);
    float* ot = out + size_t(blockIdx.x) * size_t(n);
    float mean = 0.0f;
    if (b) {
        double sum = 0.0;
        for (int64_t i = threadIdx.x; i < n; i += kNormThreads) sum += double(xt[i]);
        mean = float(block_sum(sum, shared) / double(n));
    }
    double sum2 = 0.0;
    for (int64_t i = threadIdx.x; i < n; i += kNormThreads) {
        const float c = add(xt[i], -mean);
        sum2 += double(mul(c, c));
    }
    const float scale = norm_scale(block_sum(sum2, shared), n, eps);
    for (int64_t i = threadIdx.x; i < n; i += kNormThreads) ot[i] = norm_value(xt[i], mean, scale, w[i], b, i);
}

__global__ void prepare_q8_kernel(const float* x, int64_t n, uint8_t* out, size_t stride) {
    const int64_t block = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (block >= n / 32) return;
    const size_t t = blockIdx.y;
    quantize_q8_0_block(x + t * size_t(n) + size_t(block) * 32, out + t * stride + size_t(block) * 34);
}

__global__ void prepare_f16_kernel(const float* x, int64_t n, uint16_t* out) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const size_t at = size_t(blockIdx.y) * size_t(n) + size_t(i);
    out[at] = float_to_half(x[at]);
}

// Thread per pair of a head; blockIdx.y is the token.
__global__ void rope_kernel(float* x, size_t row_stride, int32_t n_heads, int32_t head_dim, const float* angles,
                            bool neox) {
    const int32_t half = head_dim / 2;
    const int32_t p = int32_t(blockIdx.x) * int32_t(blockDim.x) + int32_t(threadIdx.x);
    if (p >= n_heads * half) return;
    const int32_t h = p / half, j = p % half;
    float* head = x + size_t(blockIdx.y) * row_stride + size_t(h) * size_t(head_dim);
    rope_pair(head + rope_first(j, neox), head + rope_second(j, head_dim, neox),
              angles + size_t(blockIdx.y) * size_t(head_dim), j, head_dim);
}

__global__ void relu_kernel(float* x, size_t n) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__global__ void add_kernel(const float* a, const float* b, size_t n, float* out) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

}  // namespace

void launch_norm(const float* x, const float* w, const float* b, float eps, int64_t n, int32_t n_tokens, float* out,
                 gpuStream_t stream) {
    if (n_tokens == 0 || n == 0) return;
    norm_kernel<<<unsigned(n_tokens), kNormThreads, 0, stream>>>(x, w, b, eps, n, out);
    check(gpuGetLastError(), "launching the norm kernel");
}

void launch_prepare(DType weight, const float* x, int64_t n, int32_t n_tokens, uint8_t* out, gpuStream_t stream) {
    if (n_tokens == 0 || n == 0) return;
    switch (weight) {
        case DType::F16:
            prepare_f16_kernel<<<dim3(blocks_for(n, 256), unsigned(n_tokens)), 256, 0, stream>>>(
                x, n, reinterpret_cast<uint16_t*>(out));
            break;
        case DType::Q4_0:
        case DType::Q8_0:
            prepare_q8_kernel<<<dim3(blocks_for(n / 32, 128), unsigned(n_tokens)), 128, 0, stream>>>(
                x, n, out, activation_bytes(weight, n));
            break;
        default:
            fail(std::string(EMBER_GPU_API " device: no activation kernel for ") + tensor::dtype_name(weight) + " rows");
    }
    check(gpuGetLastError(), "launching the activation kernel");
}

void launch_rope(float* x, size_t row_stride, int32_t n_heads, int32_t head_dim, int32_t n_tokens, const float* angles,
                 bool neox, gpuStream_t stream) {
    const int64_t pairs = int64_t(n_heads) * (head_dim / 2);
    if (n_tokens == 0 || pairs == 0) return;
    rope_kernel<<<dim3(blocks_for(pairs, 128), unsigned(n_tokens)), 128, 0, stream>>>(x, row_stride, n_heads, head_dim,
                                                                                      angles, neox);
    check(gpuGetLastError(), "launching the RoPE kernel");
}

void launch_relu(float* x, size_t n, gpuStream_t stream) {
    if (n == 0) return;
    relu_kernel<<<blocks_for(int64_t(n), 256), 256, 0, stream>>>(x, n);
    check(gpuGetLastError(), "launching the ReLU kernel");
}

void launch_add(const float* a, const float* b, size_t n, float* out, gpuStream_t stream) {
    if (n == 0) return;
    add_kernel<<<blocks_for(int64_t(n), 256), 256, 0, stream>>>(a, b, n, out);
    check(gpuGetLastError(), "launching the residual kernel");
}

}  // namespace ember::backend::gpu

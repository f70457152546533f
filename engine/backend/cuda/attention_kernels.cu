#include "backend/cuda/kernel_prelude.h"

#include "backend/cuda/attention_kernels.h"
#include "backend/cuda/attention_math.h"

#include <string>

#include "common/error.h"

namespace ember::backend::gpu {
namespace {

__global__ void store_half_kernel(const float* src, int32_t n, uint16_t* dst, size_t stride) {
    const int32_t i = int32_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const size_t t = blockIdx.y;
    dst[t * stride + size_t(i)] = float_to_half(src[t * size_t(n) + size_t(i)]);
}

// Tree reduction over the block's threads, in the same order every run.
template <class Op>
__device__ float block_reduce(float v, float* shared, Op op) {
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int width = kAttentionThreads / 2; width > 0; width /= 2) {
        if (int(threadIdx.x) < width) shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + width]);
        __syncthreads();
    }
    const float result = shared[0];
    __syncthreads();
    return result;
}

__global__ void attention_kernel(AttentionArgs a) {
    __shared__ uint16_t q_half[kMaxHeadDim];
    __shared__ float reduce[kAttentionThreads];
    const int32_t h = int32_t(blockIdx.x);
    const int32_t hd = a.head_dim;
    for (int32_t d = threadIdx.x; d < hd; d += kAttentionThreads) q_half[d] = float_to_half(a.q[size_t(h) * hd + d]);
    __syncthreads();

    const size_t kv_offset = size_t(h / a.group) * size_t(hd);
    float* scores = a.scores + size_t(h) * size_t(a.n_keys);
    float max = -INFINITY;
    for (int32_t p = threadIdx.x; p < a.n_keys; p += kAttentionThreads) {
        const float s = attention_score(a.k + size_t(p) * a.stride + kv_offset, q_half, hd, a.scale);
        scores[p] = s;
        max = fmaxf(max, s);
    }
    max = block_reduce(max, reduce, [](float x, float y) { return fmaxf(x, y); });
    float sum = 0.0f;
    for (int32_t p = threadIdx.x; p < a.n_keys; p += kAttentionThreads) {
        const float w = softmax_weight(scores[p], max);
        scores[p] = w;
        sum += w;
    }
    sum = block_reduce(sum, reduce, [](float x, float y) { return x + y; });
    const float inv = 1.0f / sum;
    // Every thread's weights are written before any thread reads them all.
    __syncthreads();
    for (int32_t d = threadIdx.x; d < hd; d += kAttentionThreads) {
        float acc = 0.0f;
        for (int32_t p = 0; p < a.n_keys; ++p)
            acc += round_to_half(scores[p] * inv) * half_to_float(a.v[size_t(p) * a.stride + kv_offset + size_t(d)]);
        a.out[size_t(h) * hd + d] = acc;
    }
}

}  // namespace

void launch_store_half(const float* src, int32_t n_tokens, int32_t n, uint16_t* dst, size_t stride, gpuStream_t stream) {
    if (n_tokens == 0 || n == 0) return;
    const dim3 grid(unsigned((n + 255) / 256), unsigned(n_tokens));
    store_half_kernel<<<grid, 256, 0, stream>>>(src, n, dst, stride);
    check(gpuGetLastError(), "launching the KV store");
}

void launch_attention(const AttentionArgs& a, gpuStream_t stream) {
    if (a.head_dim > kMaxHeadDim)
        fail(std::string(EMBER_GPU_API " device: heads of ") + std::to_string(a.head_dim) + " values exceed the attention kernel's " +
             std::to_string(kMaxHeadDim));
    attention_kernel<<<unsigned(a.n_head), kAttentionThreads, 0, stream>>>(a);
    check(gpuGetLastError(), "launching the attention kernel");
}

}  // namespace ember::backend::gpu

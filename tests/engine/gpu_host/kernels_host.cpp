// The GPU kernels' launches run on the host, for the stand-in runtime (gpu_runtime_host.h):
// each row's dot product summed over the kernel's lanes with ffn_math.h's lane functions, the
// down-projection in the kernel's fixed chunks, attention with attention_math.h's steps, the
// layer kernels with layer_math.h's and the norm kernel's reduction tree.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/attention_kernels.h"
#include "backend/cuda/attention_math.h"
#include "backend/cuda/ffn_kernels.h"
#include "backend/cuda/layer_kernels.h"
#include "backend/cuda/layer_math.h"
#include "common/error.h"

namespace ember::backend::gpu {
namespace {

using tensor::DType;

[[noreturn]] void unsupported(DType t, const char* op) {
    fail(std::string(EMBER_GPU_API ": no ") + op + " kernel for " + tensor::dtype_name(t) + " rows");
}

float dot(DType t, const uint8_t* w, const uint8_t* x, int64_t n) {
    float acc = 0.0f;
    for (int lane = 0; lane < kLanes; ++lane) {
        switch (t) {
            case DType::F16: acc += dot_f16_lane(w, x, n, lane); break;
            case DType::Q4_0: acc += dot_q4_0_lane(w, x, n, lane); break;
            case DType::Q8_0: acc += dot_q8_0_lane(w, x, n, lane); break;
            default: unsupported(t, "dot product");
        }
    }
    return acc;
}

float value(DType t, const uint8_t* w, int64_t c) {
    switch (t) {
        case DType::F16: return value_f16(w, c);
        case DType::Q4_0: return value_q4_0(w, c);
        case DType::Q8_0: return value_q8_0(w, c);
        default: unsupported(t, "down-projection");
    }
}

}  // namespace

void launch_dots(const DeviceRows& rows, const uint8_t* x, const int32_t* local, int32_t n, float* out, gpuStream_t) {
    for (int32_t j = 0; j < n; ++j) out[j] = dot(rows.type, rows.data + size_t(local[j]) * rows.row_bytes, x, rows.n_cols);
}

void launch_matmul(const DeviceRows& rows, int32_t n_rows, const uint8_t* x, int32_t n_tokens, float* out, gpuStream_t) {
    const size_t stride = activation_bytes(rows.type, rows.n_cols);
    for (int32_t t = 0; t < n_tokens; ++t)
        for (int32_t r = 0; r < n_rows; ++r)
            out[size_t(t) * size_t(n_rows) + size_t(r)] =
                dot(rows.type, rows.data + size_t(r) * rows.row_bytes, x + size_t(t) * stride, rows.n_cols);
}

void launch_down(const DeviceRows& rows, const int32_t* local, const float* coef, int32_t n, float* partial, float* y,
                 gpuStream_t) {
    const int32_t chunks = down_chunks(n);
    for (int32_t k = 0; k < chunks; ++k)
        for (int64_t c = 0; c < rows.n_cols; ++c) {
            float acc = 0.0f;
            for (int32_t j = k * kDownChunk; j < std::min(n, (k + 1) * kDownChunk); ++j)
                if (coef[j] != 0.0f) acc += coef[j] * value(rows.type, rows.data + size_t(local[j]) * rows.row_bytes, c);
            partial[int64_t(k) * rows.n_cols + c] = acc;
        }
    for (int64_t c = 0; c < rows.n_cols; ++c) {
        float acc = 0.0f;
        for (int32_t k = 0; k < chunks; ++k) acc += partial[int64_t(k) * rows.n_cols + c];
        y[c] = acc;
    }
}

void launch_copy_rows(uint8_t* dst, const int32_t* dst_rows, const uint8_t* src, const int32_t* src_rows, int32_t n,
                      size_t row_bytes, gpuStream_t) {
    for (int32_t j = 0; j < n; ++j)
        std::memcpy(dst + size_t(dst_rows[j]) * row_bytes, src + size_t(src_rows[j]) * row_bytes, row_bytes);
}

void launch_store_half(const float* src, int32_t n_tokens, int32_t n, uint16_t* dst, size_t stride, gpuStream_t) {
    for (int32_t t = 0; t < n_tokens; ++t)
        for (int32_t i = 0; i < n; ++i) dst[size_t(t) * stride + size_t(i)] = float_to_half(src[size_t(t) * size_t(n) + size_t(i)]);
}

void launch_attention(const AttentionArgs& a, gpuStream_t) {
    std::vector<uint16_t> q_half(size_t(a.head_dim));
    for (int32_t h = 0; h < a.n_head; ++h) {
        for (int32_t d = 0; d < a.head_dim; ++d) q_half[size_t(d)] = float_to_half(a.q[size_t(h) * size_t(a.head_dim) + size_t(d)]);
        const size_t kv_offset = size_t(h / a.group) * size_t(a.head_dim);
        float* scores = a.scores + size_t(h) * size_t(a.n_keys);
        float max = -INFINITY;
        for (int32_t p = 0; p < a.n_keys; ++p) {
            scores[p] = attention_score(a.k + size_t(p) * a.stride + kv_offset, q_half.data(), a.head_dim, a.scale);
            max = std::max(max, scores[p]);
        }
        float sum = 0.0f;
        for (int32_t p = 0; p < a.n_keys; ++p) {
            scores[p] = softmax_weight(scores[p], max);
            sum += scores[p];
        }
        const float inv = 1.0f / sum;
        for (int32_t d = 0; d < a.head_dim; ++d) {
            float acc = 0.0f;
            for (int32_t p = 0; p < a.n_keys; ++p)
                acc += round_to_half(scores[p] * inv) * half_to_float(a.v[size_t(p) * a.stride + kv_offset + size_t(d)]);
            a.out[size_t(h) * size_t(a.head_dim) + size_t(d)] = acc;
        }
    }
}

namespace {

// Each of the kernel's threads sums its strided share; the shares meet over the kernel's tree.
template <class Term>
double tree_sum(int64_t n, Term term) {
    double shared[kNormThreads] = {};
    for (int tid = 0; tid < kNormThreads; ++tid)
        for (int64_t i = tid; i < n; i += kNormThreads) shared[tid] += term(i);
    for (int width = kNormThreads / 2; width > 0; width /= 2)
        for (int tid = 0; tid < width; ++tid) shared[tid] += shared[tid + width];
    return shared[0];
}

}  // namespace

void launch_norm(const float* x, const float* w, const float* b, float eps, int64_t n, int32_t n_tokens, float* out,
                 gpuStream_t) {
    for (int32_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + size_t(t) * size_t(n);
        float* ot = out + size_t(t) * size_t(n);
        const float mean = b ? float(tree_sum(n, [&](int64_t i) { return double(xt[i]); }) / double(n)) : 0.0f;
        const float scale = norm_scale(tree_sum(n, [&](int64_t i) {
            const float c = xt[i] - mean;
            return double(c * c);
        }), n, eps);
        for (int64_t i = 0; i < n; ++i) ot[i] = norm_value(xt[i], mean, scale, w[i], b, i);
    }
}

void launch_prepare(DType weight, const float* x, int64_t n, int32_t n_tokens, uint8_t* out, gpuStream_t) {
    const size_t stride = activation_bytes(weight, n);
    for (int32_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + size_t(t) * size_t(n);
        uint8_t* ot = out + size_t(t) * stride;
        if (weight == DType::F16) {
            for (int64_t i = 0; i < n; ++i) reinterpret_cast<uint16_t*>(ot)[i] = float_to_half(xt[i]);
        } else {
            for (int64_t blk = 0; blk < n / 32; ++blk) quantize_q8_0_block(xt + blk * 32, ot + blk * 34);
        }
    }
}

void launch_rope(float* x, size_t row_stride, int32_t n_heads, int32_t head_dim, int32_t n_tokens, const float* angles,
                 bool neox, gpuStream_t) {
    for (int32_t t = 0; t < n_tokens; ++t)
        for (int32_t h = 0; h < n_heads; ++h) {
            float* head = x + size_t(t) * row_stride + size_t(h) * size_t(head_dim);
            for (int32_t j = 0; j < head_dim / 2; ++j)
                rope_pair(head + rope_first(j, neox), head + rope_second(j, head_dim, neox),
                          angles + size_t(t) * size_t(head_dim), j, head_dim);
        }
}

void launch_relu(float* x, size_t n, gpuStream_t) {
    for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void launch_add(const float* a, const float* b, size_t n, float* out, gpuStream_t) {
    for (size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace ember::backend::gpu

#include "tensor/kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "tensor/fp16.h"
#include "tensor/dtype.h"
#include "tensor/grouped_rows.h"
#include "tensor/kquant_axpy.h"
#include "tensor/q4_0_x16.h"
#include "tensor/quant_dots_ref.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace ember::tensor {
namespace {

float dot_f32(int64_t n, const float* w, const float* x) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) sum += w[i] * x[i];
    return sum;
}

// F16 products are accumulated in double in the reference, as ggml's scalar path does.
float dot_f16(int64_t n, const uint16_t* w, const uint16_t* x) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(fp16_to_f32(w[i]) * fp16_to_f32(x[i]));
    return float(sum);
}

float dot_bf16(int64_t n, const uint16_t* w, const uint16_t* x) {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i) sum += double(bf16_to_f32(w[i]) * bf16_to_f32(x[i]));
    return float(sum);
}

float dot_q4_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ4_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        int isum = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            isum += ((w[i].qs[j] & 0x0F) - 8) * x[i].qs[j];
            isum += ((w[i].qs[j] >> 4) - 8) * x[i].qs[j + kQK / 2];
        }
        sum += float(isum) * (fp16_to_f32(w[i].d) * fp16_to_f32(x[i].d));
    }
    return sum;
}

// Block by block in order, each block's sum as dot_q4_0_q8_0 forms it: bit-identical to that
// kernel on the stored row.
float dot_q4_0x16_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const uint8_t*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    const int64_t n_blocks = n / kQK;
    float sum = 0.0f;
    for (int64_t b0 = 0; b0 < n_blocks; b0 += kX16Blocks) {
        const int64_t m = std::min(kX16Blocks, n_blocks - b0);
        const uint8_t* run = w + size_t(b0) * sizeof(BlockQ4_0);
        for (int64_t i = 0; i < m; ++i) {
            const BlockQ8_0& xb = x[b0 + i];
            int isum = 0;
            for (int j = 0; j < kQK / 2; ++j) {
                const uint8_t q = run[x16_word_offset(m, i, j / 4) + size_t(j % 4)];
                isum += ((q & 0x0F) - 8) * xb.qs[j];
                isum += ((q >> 4) - 8) * xb.qs[j + kQK / 2];
            }
            uint16_t d;
            std::memcpy(&d, run + x16_scale_offset(m, i), 2);
            sum += float(isum) * (fp16_to_f32(d) * fp16_to_f32(xb.d));
        }
    }
    return sum;
}

void dot4_q4_0x16_q8_0(int64_t n, const void* const* w, const void* x, float* out, size_t) {
    for (int r = 0; r < 4; ++r) out[r] = dot_q4_0x16_q8_0(n, w[r], x);
}

float dot_q8_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ8_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        int isum = 0;
        for (int j = 0; j < kQK; ++j) isum += int(w[i].qs[j]) * int(x[i].qs[j]);
        sum += float(isum) * (fp16_to_f32(w[i].d) * fp16_to_f32(x[i].d));
    }
    return sum;
}

float dot_q6_k_q8_k(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ6_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int8_t q[kQK_K];
        const uint8_t* ql = w[i].ql;
        const uint8_t* qh = w[i].qh;
        for (int half = 0; half < 2; ++half) {
            int8_t* a = q + half * 128;
            for (int l = 0; l < 32; ++l) {
                a[l] = int8_t(((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
                a[l + 32] = int8_t(((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
                a[l + 64] = int8_t(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
                a[l + 96] = int8_t(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
            }
            ql += 64;
            qh += 32;
        }
        int isum = 0;
        for (int g = 0; g < 16; ++g) {
            int gsum = 0;
            for (int j = 0; j < 16; ++j) gsum += int(q[g * 16 + j]) * int(x[i].qs[g * 16 + j]);
            isum += int(w[i].scales[g]) * gsum;
        }
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
    }
    return sum;
}

// Activations are quantized the way llama.cpp's SIMD path does it (scale 127 / max, round half
// to even), which differs from its reference weight quantizer in the last bit: PowerInfer's
// published outputs were made by the SIMD path.
void quantize_activation_q8_0(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(out);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float* v = x + i * kQK;
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(v[j]));
        const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
        y[i].d = f32_to_fp16(amax / 127.0f);
        for (int j = 0; j < kQK; ++j) y[i].qs[j] = int8_t(std::nearbyint(v[j] * id));
    }
}

size_t q8_activation_bytes(int64_t n) { return size_t(n / kQK) * sizeof(BlockQ8_0); }

void f32_to_f16(const float* x, uint16_t* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = f32_to_fp16(x[i]);
}

void axpy_f16(int64_t n, float a, const uint16_t* x, float* y) {
    for (int64_t i = 0; i < n; ++i) y[i] = std::fma(a, fp16_to_f32(x[i]), y[i]);
}

// Each element gets (a · d) · q with one rounding of the product-sum, as the SIMD twins' FMA.
void axpy_q4_0(int64_t n, float a, const void* xv, float* y) {
    auto* x = static_cast<const BlockQ4_0*>(xv);
    for (int64_t b = 0; b < n / kQK; ++b) {
        const float d = a * fp16_to_f32(x[b].d);
        float* yb = y + b * kQK;
        for (int j = 0; j < kQK / 2; ++j) {
            yb[j] = std::fma(d, float((x[b].qs[j] & 0x0F) - 8), yb[j]);
            yb[j + kQK / 2] = std::fma(d, float((x[b].qs[j] >> 4) - 8), yb[j + kQK / 2]);
        }
    }
}

void weighted_sum_f16(int64_t n_rows, const uint16_t* w, const uint16_t* x, size_t stride, int64_t n, float* out) {
    std::fill(out, out + n, 0.0f);
    for (int64_t p = 0; p < n_rows; ++p) axpy_f16(n, fp16_to_f32(w[p]), x + size_t(p) * stride, out);
}

void axpy_q8_0(int64_t n, float a, const void* xv, float* y) {
    auto* x = static_cast<const BlockQ8_0*>(xv);
    for (int64_t b = 0; b < n / kQK; ++b) {
        const float d = a * fp16_to_f32(x[b].d);
        for (int j = 0; j < kQK; ++j) y[b * kQK + j] = std::fma(d, float(x[b].qs[j]), y[b * kQK + j]);
    }
}

void f16_to_f32(const uint16_t* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_f32(x[i]);
}

// Row by row through the row kernels, each row taken back to its stored layout.
template <void (*RowFromGroup)(const uint8_t*, int64_t, int, uint8_t*), float (*Dot)(int64_t, const void*, const void*),
          DType kStored>
void gemm_by_rows(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y,
                  size_t y_stride) {
    std::vector<uint8_t> row(row_bytes(kStored, n));
    for (int r = 0; r < kR8Rows; ++r) {
        RowFromGroup(static_cast<const uint8_t*>(group), n, r, row.data());
        for (int64_t t = 0; t < n_tokens; ++t) y[size_t(t) * y_stride + size_t(r)] = Dot(n, row.data(), x + size_t(t) * x_stride);
    }
}

}  // namespace

const KernelTable& reference_kernels() {
    static const KernelTable table{
        .isa = "scalar",
        .dot_f32 = dot_f32,
        .dot_f16 = dot_f16,
        .dot_bf16 = dot_bf16,
        .dot_q4_0_q8_0 = dot_q4_0_q8_0,
        .dot_q8_0_q8_0 = dot_q8_0_q8_0,
        .dot4_q4_0_q8_0 = dot4_by_rows<dot_q4_0_q8_0>,
        .dot_q6_k_q8_k = dot_q6_k_q8_k,
        .q8_activation_bytes = q8_activation_bytes,
        .prepare_q8_activation = quantize_activation_q8_0,
        .quantize_q8_k = quantize_row_q8_k_ref,
        .f32_to_f16 = f32_to_f16,
        .axpy_f16 = axpy_f16,
        .axpy_q4_0 = axpy_q4_0,
        .axpy_q8_0 = axpy_q8_0,
        .axpy8_q4_0 = axpy8_by_rows<axpy_q4_0>,
        .axpy8_q8_0 = axpy8_by_rows<axpy_q8_0>,
        .axpy8_f16 = axpy8_f16_by_rows<axpy_f16>,
        .axpy_tokens_q4_0 = axpy_tokens_by_rows<axpy_q4_0, sizeof(BlockQ4_0)>,
        .axpy_tokens_q8_0 = axpy_tokens_by_rows<axpy_q8_0, sizeof(BlockQ8_0)>,
        .axpy_q4_k = axpy_q4_k_ref,
        .axpy_q5_k = axpy_q5_k_ref,
        .axpy_q6_k = axpy_q6_k_ref,
        .f16_to_f32 = f16_to_f32,
        .weighted_sum_f16 = weighted_sum_f16,
        .interleave_q4_0 = false,
        .dot_q4_0x16_q8_0 = dot_q4_0x16_q8_0,
        .dot4_q4_0x16_q8_0 = dot4_q4_0x16_q8_0,
        .dot_q4_1_q8_0 = dot_q4_1_q8_0_ref,
        .dot_q5_0_q8_0 = dot_q5_0_q8_0_ref,
        .dot_q5_1_q8_0 = dot_q5_1_q8_0_ref,
        .dot_iq4_nl_q8_0 = dot_iq4_nl_q8_0_ref,
        .dot_q2_k_q8_k = dot_q2_k_q8_k_ref,
        .dot_q3_k_q8_k = dot_q3_k_q8_k_ref,
        .dot_q4_k_q8_k = dot_q4_k_q8_k_ref,
        .dot_q5_k_q8_k = dot_q5_k_q8_k_ref,
        .dot_iq4_xs_q8_k = dot_iq4_xs_q8_k_ref,
        .dot_q4_k_q8_k_x4 = dot_tokens4_by_calls<dot_q4_k_q8_k_ref>,
        .dot_q5_k_q8_k_x4 = dot_tokens4_by_calls<dot_q5_k_q8_k_ref>,
        .dot_q6_k_q8_k_x4 = dot_tokens4_by_calls<dot_q6_k_q8_k>,
        .dot_q4_1_q8_0_x4 = dot_tokens4_by_calls<dot_q4_1_q8_0_ref>,
        .dot_q5_0_q8_0_x4 = dot_tokens4_by_calls<dot_q5_0_q8_0_ref>,
        .dot_q5_1_q8_0_x4 = dot_tokens4_by_calls<dot_q5_1_q8_0_ref>,
        .dot_iq4_nl_q8_0_x4 = dot_tokens4_by_calls<dot_iq4_nl_q8_0_ref>,
        .dot_q2_k_q8_k_x4 = dot_tokens4_by_calls<dot_q2_k_q8_k_ref>,
        .dot_q3_k_q8_k_x4 = dot_tokens4_by_calls<dot_q3_k_q8_k_ref>,
        .dot_iq4_xs_q8_k_x4 = dot_tokens4_by_calls<dot_iq4_xs_q8_k_ref>,
        .group_q4_0 = false,
        .group_q8_0 = false,
        .group_q4_k = false,
        .group_q5_k = false,
        .group_q6_k = false,
        .gemm_q4_0_r8_q8_0 = gemm_by_rows<q4_0_row_from_r8, dot_q4_0_q8_0, DType::Q4_0>,
        .gemm_q8_0_r8_q8_0 = gemm_by_rows<q8_0_row_from_r8, dot_q8_0_q8_0, DType::Q8_0>,
        .gemm_q4_k_r8_q8_k = gemm_by_rows<q4_k_row_from_r8, dot_q4_k_q8_k_ref, DType::Q4_K>,
        .gemm_q5_k_r8_q8_k = gemm_by_rows<q5_k_row_from_r8, dot_q5_k_q8_k_ref, DType::Q5_K>,
        .gemm_q6_k_r8_q8_k = gemm_by_rows<q6_k_row_from_r8, dot_q6_k_q8_k, DType::Q6_K>,
        .gemv4_q4_0_r8_q8_0 = gemv4_by_groups<gemm_by_rows<q4_0_row_from_r8, dot_q4_0_q8_0, DType::Q4_0>>,
        .gemv4_q8_0_r8_q8_0 = gemv4_by_groups<gemm_by_rows<q8_0_row_from_r8, dot_q8_0_q8_0, DType::Q8_0>>,
        .gemv4_q4_k_r8_q8_k = gemv4_by_groups<gemm_by_rows<q4_k_row_from_r8, dot_q4_k_q8_k_ref, DType::Q4_K>>,
        .gemv4_q5_k_r8_q8_k = gemv4_by_groups<gemm_by_rows<q5_k_row_from_r8, dot_q5_k_q8_k_ref, DType::Q5_K>>,
        .gemv4_q6_k_r8_q8_k = gemv4_by_groups<gemm_by_rows<q6_k_row_from_r8, dot_q6_k_q8_k, DType::Q6_K>>,
        .gemm_groups_q4_0_r8_q8_0 = nullptr,
        .gemm_groups_q8_0_r8_q8_0 = nullptr,
        .gemm_groups_q4_k_r8_q8_k = nullptr,
        .gemm_groups_q5_k_r8_q8_k = nullptr,
    };
    return table;
}

}  // namespace ember::tensor

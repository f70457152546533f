// Q4_K, Q5_K and Q6_K from floats, as llama.cpp's reference quantizers (the ones its
// `llama-quantize` runs without an importance matrix) choose scales, so Ember's files of a model
// are upstream's byte for byte.
#include "tensor/unfused_arithmetic.h"

#include "tensor/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace ember::tensor {
namespace {

// Round to nearest, ties to even, for |v| < 2^22: adding 1.5·2^23 leaves the integer in the
// mantissa's low bits.
int nearest_int(float v) {
    const float shifted = v + 12582912.0f;
    int32_t bits;
    std::memcpy(&bits, &shifted, 4);
    return (bits & 0x007fffff) - 0x00400000;
}

// x ≈ scale·L + min over one sub-block, L in [0, nmax], min ≤ 0: the min-max fit first, then
// nstep + 1 other grids (nmax + rmin + rdelta·k levels over the range), each refit by weighted
// least squares; the one with the smallest weighted squared error wins. Returns the scale and
// writes -min.
float fit_scale_and_min(int n, int nmax, const float* x, const float* w, uint8_t* L, float* neg_min, uint8_t* trial,
                        float rmin, float rdelta, int nstep) {
    float min = x[0], max = x[0];
    float sum_w = w[0];
    float sum_x = sum_w * x[0];
    for (int i = 1; i < n; ++i) {
        if (x[i] < min) min = x[i];
        if (x[i] > max) max = x[i];
        sum_w += w[i];
        sum_x += w[i] * x[i];
    }
    if (min > 0) min = 0;
    if (max == min) {
        std::fill(L, L + n, uint8_t(0));
        *neg_min = -min;
        return 0.0f;
    }
    float iscale = float(nmax) / (max - min);
    float scale = 1 / iscale;
    float best_error = 0;
    for (int i = 0; i < n; ++i) {
        L[i] = uint8_t(std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax));
        const float diff = scale * float(L[i]) + min - x[i];
        best_error += w[i] * (diff * diff);
    }
    for (int step = 0; step <= nstep; ++step) {
        iscale = (rmin + rdelta * float(step) + float(nmax)) / (max - min);
        float sum_l = 0, sum_l2 = 0, sum_xl = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(nearest_int(iscale * (x[i] - min)), 0, nmax);
            trial[i] = uint8_t(l);
            const float wl = w[i] * float(l);
            sum_l += wl;
            sum_l2 += wl * float(l);
            sum_xl += wl * x[i];
        }
        const float det = sum_w * sum_l2 - sum_l * sum_l;
        if (!(det > 0)) continue;
        float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
        float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
        if (this_min > 0) {
            this_min = 0;
            this_scale = sum_xl / sum_l2;
        }
        float error = 0;
        for (int i = 0; i < n; ++i) {
            const float diff = this_scale * float(trial[i]) + this_min - x[i];
            error += w[i] * (diff * diff);
        }
        if (error < best_error) {
            std::copy(trial, trial + n, L);
            best_error = error;
            scale = this_scale;
            min = this_min;
        }
    }
    *neg_min = -min;
    return scale;
}

// Q4_K and Q5_K: eight sub-blocks of 32, each fit with weights |x| + rms(sub-block); their scales
// and minimums quantized to 6 bits against the largest of each, the quants then recomputed
// against the scales as stored.
void k_quant_superblock(const float* x, int nmax, float rmin, int nstep, uint16_t& d_out, uint16_t& dmin_out,
                        uint8_t* packed_scales, uint8_t* L) {
    float scales[8], mins[8], weights[32];
    uint8_t trial[32];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
        const float* v = x + 32 * j;
        float sum_x2 = 0;
        for (int l = 0; l < 32; ++l) sum_x2 += v[l] * v[l];
        const float av_x = std::sqrt(sum_x2 / 32);
        for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(v[l]);
        scales[j] = fit_scale_and_min(32, nmax, v, weights, L + 32 * j, &mins[j], trial, rmin, 0.1f, nstep);
        max_scale = std::max(max_scale, scales[j]);
        max_min = std::max(max_min, mins[j]);
    }
    const float inv_scale = max_scale > 0 ? 63.0f / max_scale : 0.0f;
    const float inv_min = max_min > 0 ? 63.0f / max_min : 0.0f;
    std::memset(packed_scales, 0, kKScaleBytes);
    for (int j = 0; j < 8; ++j) {
        const uint8_t ls = std::min<uint8_t>(63, uint8_t(nearest_int(inv_scale * scales[j])));
        const uint8_t lm = std::min<uint8_t>(63, uint8_t(nearest_int(inv_min * mins[j])));
        if (j < 4) {
            packed_scales[j] = ls;
            packed_scales[j + 4] = lm;
        } else {
            packed_scales[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
            packed_scales[j - 4] |= uint8_t((ls >> 4) << 6);
            packed_scales[j] |= uint8_t((lm >> 4) << 6);
        }
    }
    d_out = f32_to_fp16(max_scale / 63.0f);
    dmin_out = f32_to_fp16(max_min / 63.0f);
    for (int j = 0; j < 8; ++j) {
        int sc, m;
        k_scale_min(j, packed_scales, sc, m);
        const float d = fp16_to_f32(d_out) * float(sc);
        if (d == 0.0f) continue;
        const float dm = fp16_to_f32(dmin_out) * float(m);
        for (int l = 0; l < 32; ++l) L[32 * j + l] = uint8_t(std::clamp(nearest_int((x[32 * j + l] + dm) / d), 0, nmax));
    }
}

// x ≈ scale·(L - nmax) over 16 values with weights x², L in [0, 2·nmax): the grid through the
// largest magnitude, then 18 neighbouring grids, each refit by weighted least squares.
float fit_symmetric_scale(const float* x, int8_t* L) {
    constexpr int n = 16, nmax = 32;
    float max = 0, amax = 0;
    for (int i = 0; i < n; ++i) {
        if (std::fabs(x[i]) > amax) {
            amax = std::fabs(x[i]);
            max = x[i];
        }
    }
    if (amax < 1e-15f) {
        std::fill(L, L + n, int8_t(0));
        return 0.0f;
    }
    const auto fit = [&](float iscale, float& sum_lx, float& sum_l2, int8_t* out) {
        sum_lx = sum_l2 = 0;
        for (int i = 0; i < n; ++i) {
            const int l = std::clamp(nearest_int(iscale * x[i]), -nmax, nmax - 1);
            if (out) out[i] = int8_t(l + nmax);
            const float w = x[i] * x[i];
            sum_lx += w * x[i] * float(l);
            sum_l2 += w * float(l) * float(l);
        }
    };
    float sum_lx, sum_l2;
    fit(float(-nmax) / max, sum_lx, sum_l2, L);
    float scale = sum_l2 != 0.0f ? sum_lx / sum_l2 : 0.0f;
    float best = scale * sum_lx;
    for (int step = -9; step <= 9; ++step) {
        if (step == 0) continue;
        const float iscale = -(float(nmax) + 0.1f * float(step)) / max;
        fit(iscale, sum_lx, sum_l2, nullptr);
        if (sum_l2 > 0 && sum_lx * sum_lx > best * sum_l2) {
            fit(iscale, sum_lx, sum_l2, L);
            scale = sum_lx / sum_l2;
            best = scale * sum_lx;
        }
    }
    return scale;
}

}  // namespace

void quantize_row_q4_k_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ4_K*>(out);
    uint8_t L[kQK_K];
    for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
        k_quant_superblock(x, 15, -1.0f, 20, y[i].d, y[i].dmin, y[i].scales, L);
        uint8_t* q = y[i].qs;
        for (int j = 0; j < kQK_K; j += 64, q += 32)
            for (int l = 0; l < 32; ++l) q[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
    }
}

void quantize_row_q5_k_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ5_K*>(out);
    uint8_t L[kQK_K];
    for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
        k_quant_superblock(x, 31, -0.5f, 15, y[i].d, y[i].dmin, y[i].scales, L);
        std::memset(y[i].qh, 0, sizeof y[i].qh);
        uint8_t* q = y[i].qs;
        for (int j = 0, bit = 0; j < kQK_K; j += 64, bit += 2, q += 32) {
            for (int l = 0; l < 32; ++l) {
                const int lo = L[j + l], hi = L[j + l + 32];
                y[i].qh[l] |= uint8_t(((lo >> 4) << bit) | ((hi >> 4) << (bit + 1)));
                q[l] = uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
            }
        }
    }
}

void quantize_row_q6_k_ref(const float* x, void* out, int64_t n) {
    auto* y = static_cast<BlockQ6_K*>(out);
    int8_t L[kQK_K];
    float scales[kQK_K / 16];
    for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
        float max_scale = 0, max_abs_scale = 0;
        for (int ib = 0; ib < kQK_K / 16; ++ib) {
            scales[ib] = fit_symmetric_scale(x + 16 * ib, L + 16 * ib);
            if (std::fabs(scales[ib]) > max_abs_scale) {
                max_abs_scale = std::fabs(scales[ib]);
                max_scale = scales[ib];
            }
        }
        if (max_abs_scale < 1e-15f) {
            std::memset(&y[i], 0, sizeof(BlockQ6_K));
            continue;
        }
        const float iscale = -128.0f / max_scale;
        y[i].d = f32_to_fp16(1 / iscale);
        for (int ib = 0; ib < kQK_K / 16; ++ib) y[i].scales[ib] = int8_t(std::min(127, nearest_int(iscale * scales[ib])));
        for (int j = 0; j < kQK_K / 16; ++j) {
            const float d = fp16_to_f32(y[i].d) * float(y[i].scales[j]);
            if (d == 0.0f) continue;
            for (int l = 0; l < 16; ++l) L[16 * j + l] = int8_t(std::clamp(nearest_int(x[16 * j + l] / d), -32, 31) + 32);
        }
        uint8_t* ql = y[i].ql;
        uint8_t* qh = y[i].qh;
        for (int j = 0; j < kQK_K; j += 128, ql += 64, qh += 32) {
            for (int l = 0; l < 32; ++l) {
                const int q1 = L[j + l], q2 = L[j + l + 32], q3 = L[j + l + 64], q4 = L[j + l + 96];
                ql[l] = uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
                ql[l + 32] = uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
                qh[l] = uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
            }
        }
    }
}

}  // namespace ember::tensor

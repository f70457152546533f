#include "tensor/kquant_axpy.h"

#include <cmath>

#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace ember::tensor {
namespace {

template <typename Block>
void axpy_k_with_mins(int64_t n, float a, const void* xv, float* y) {
    const auto* x = static_cast<const Block*>(xv);
    for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K) {
        const float d = fp16_to_f32(x[b].d), dmin = fp16_to_f32(x[b].dmin);
        for (int j = 0; j < 8; ++j) {
            int sc, mn;
            k_scale_min(j, x[b].scales, sc, mn);
            const float s = a * (d * float(sc)), m = a * (dmin * float(mn));
            for (int l = 0; l < 32; ++l) y[32 * j + l] = std::fma(s, float(k_quant(x[b], j, l)), y[32 * j + l] - m);
        }
    }
}

}  // namespace

void axpy_q4_k_ref(int64_t n, float a, const void* x, float* y) { axpy_k_with_mins<BlockQ4_K>(n, a, x, y); }
void axpy_q5_k_ref(int64_t n, float a, const void* x, float* y) { axpy_k_with_mins<BlockQ5_K>(n, a, x, y); }

void axpy_q6_k_ref(int64_t n, float a, const void* xv, float* y) {
    const auto* x = static_cast<const BlockQ6_K*>(xv);
    for (int64_t b = 0; b < n / kQK_K; ++b) {
        const float d = fp16_to_f32(x[b].d);
        const uint8_t* ql = x[b].ql;
        const uint8_t* qh = x[b].qh;
        const int8_t* sc = x[b].scales;
        float* yh = y + b * kQK_K;
        for (int half = 0; half < 2; ++half, ql += 64, qh += 32, sc += 8, yh += 128) {
            for (int l = 0; l < 32; ++l) {
                const int q[4] = {(ql[l] & 0xF) | ((qh[l] & 3) << 4), (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4),
                                  (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4), (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)};
                for (int k = 0; k < 4; ++k) {
                    const float s = a * (d * float(sc[l / 16 + 2 * k]));
                    yh[l + 32 * k] = std::fma(s, float(q[k] - 32), yh[l + 32 * k]);
                }
            }
        }
    }
}

}  // namespace ember::tensor

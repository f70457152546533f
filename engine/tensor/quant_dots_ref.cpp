#include "tensor/quant_dots_ref.h"

#include <cstring>

#include "tensor/fp16.h"
#include "tensor/quant_blocks.h"

namespace ember::tensor {
namespace {

// Σ q·x over a Q8_0 activation block and 32 weight quants given low-nibble-first, as Q4_0-style
// blocks store them, each mapped by `level`.
template <typename Level>
int nibble_dot(const uint8_t* qs, const int8_t* x, Level level) {
    int sum = 0;
    for (int j = 0; j < kQK / 2; ++j) sum += level(qs[j] & 0x0F, j) * x[j] + level(qs[j] >> 4, j + kQK / 2) * x[j + kQK / 2];
    return sum;
}

int block_sum(const int8_t* x) {
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += x[j];
    return sum;
}

uint32_t high_bits(const uint8_t* qh) {
    uint32_t h;
    std::memcpy(&h, qh, 4);
    return h;
}

// Q4_K and Q5_K: sub-block j's scale weights Σ q·x, its minimum the activation's group sums.
template <typename Block>
float dot_k_with_mins(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const Block*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int isum = 0, msum = 0;
        for (int j = 0; j < 8; ++j) {
            int sc, m;
            k_scale_min(j, w[i].scales, sc, m);
            int jsum = 0;
            for (int l = 0; l < 32; ++l) jsum += k_quant(w[i], j, l) * x[i].qs[32 * j + l];
            isum += sc * jsum;
            msum += m * (x[i].bsums[2 * j] + x[i].bsums[2 * j + 1]);
        }
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
        sum -= fp16_to_f32(w[i].dmin) * x[i].d * float(msum);
    }
    return sum;
}

}  // namespace

float dot_q4_1_q8_0_ref(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ4_1*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        const int isum = nibble_dot(w[i].qs, x[i].qs, [](int q, int) { return q; });
        const float dx = fp16_to_f32(x[i].d);
        sum += fp16_to_f32(w[i].d) * dx * float(isum);
        sum += fp16_to_f32(w[i].m) * dx * float(block_sum(x[i].qs));
    }
    return sum;
}

float dot_q5_0_q8_0_ref(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ5_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        const uint32_t h = high_bits(w[i].qh);
        const int isum = nibble_dot(w[i].qs, x[i].qs, [h](int q, int j) { return (q | int(((h >> j) & 1) << 4)) - 16; });
        sum += fp16_to_f32(w[i].d) * fp16_to_f32(x[i].d) * float(isum);
    }
    return sum;
}

float dot_q5_1_q8_0_ref(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ5_1*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        const uint32_t h = high_bits(w[i].qh);
        const int isum = nibble_dot(w[i].qs, x[i].qs, [h](int q, int j) { return q | int(((h >> j) & 1) << 4); });
        const float dx = fp16_to_f32(x[i].d);
        sum += fp16_to_f32(w[i].d) * dx * float(isum);
        sum += fp16_to_f32(w[i].m) * dx * float(block_sum(x[i].qs));
    }
    return sum;
}

float dot_iq4_nl_q8_0_ref(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockIQ4_NL*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK; ++i) {
        const int isum = nibble_dot(w[i].qs, x[i].qs, [](int q, int) { return int(kIq4Levels[q]); });
        sum += fp16_to_f32(w[i].d) * fp16_to_f32(x[i].d) * float(isum);
    }
    return sum;
}

float dot_q2_k_q8_k_ref(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ2_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int isum = 0, msum = 0;
        for (int g = 0; g < 16; ++g) {
            int gsum = 0;
            for (int l = 0; l < 16; ++l) {
                const int e = 16 * g + l;
                const int q = (w[i].qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
                gsum += q * x[i].qs[e];
            }
            isum += (w[i].scales[g] & 0xF) * gsum;
            msum += (w[i].scales[g] >> 4) * x[i].bsums[g];
        }
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
        sum -= fp16_to_f32(w[i].dmin) * x[i].d * float(msum);
    }
    return sum;
}

float dot_q3_k_q8_k_ref(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ3_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int8_t scales[16];
        q3_k_scales(w[i].scales, scales);
        int isum = 0;
        for (int g = 0; g < 16; ++g) {
            int gsum = 0;
            for (int l = 0; l < 16; ++l) {
                const int e = 16 * g + l;
                const int low = (w[i].qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
                const bool high = (w[i].hmask[e % 32] >> (e / 32)) & 1;
                gsum += (low - (high ? 0 : 4)) * x[i].qs[e];
            }
            isum += scales[g] * gsum;
        }
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
    }
    return sum;
}

float dot_q4_k_q8_k_ref(int64_t n, const void* w, const void* x) { return dot_k_with_mins<BlockQ4_K>(n, w, x); }
float dot_q5_k_q8_k_ref(int64_t n, const void* w, const void* x) { return dot_k_with_mins<BlockQ5_K>(n, w, x); }

float dot_iq4_xs_q8_k_ref(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockIQ4_XS*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        int isum = 0;
        for (int j = 0; j < 8; ++j) {
            const int ls = ((w[i].scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((w[i].scales_h >> (2 * j)) & 3) << 4);
            const uint8_t* q = w[i].qs + 16 * j;
            const int8_t* xq = x[i].qs + 32 * j;
            int jsum = 0;
            for (int l = 0; l < 16; ++l) jsum += kIq4Levels[q[l] & 0xF] * xq[l] + kIq4Levels[q[l] >> 4] * xq[l + 16];
            isum += (ls - 32) * jsum;
        }
        sum += fp16_to_f32(w[i].d) * x[i].d * float(isum);
    }
    return sum;
}

}  // namespace ember::tensor

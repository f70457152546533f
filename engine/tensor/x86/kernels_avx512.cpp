// AVX-512 (F, BW, VL, VNNI) kernels for the integer dot products, two 32-value blocks per
// 512-bit register; everything else comes from the AVX2 table. Compiled with those flags only
// for this file; used only when the CPU reports them (cpu_dispatch.cpp).
#include <immintrin.h>

#include "tensor/kernels.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"

namespace ember::tensor {
namespace {

inline float half(uint16_t h) { return _cvtsh_ss(h); }

inline __m512i load_two_q8(const BlockQ8_0* x) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[0].qs));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[1].qs));
    return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}

// Scales of two block pairs, each broadcast over its block's eight lanes.
inline __m512 two_scales(float d0, float d1) {
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_set1_ps(d0))),
                                               _mm256_castps_pd(_mm256_set1_ps(d1)), 1));
}

// Σ (w - 8) · x with w the unsigned nibbles: VNNI multiplies unsigned by signed bytes, so the
// offset is taken off afterwards with a second product against a constant 8.
float dot_q4_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ4_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    const int64_t nb = n / kQK;
    const __m512i low = _mm512_set1_epi8(0x0F);
    const __m512i eight = _mm512_set1_epi8(8);
    // 128-bit lanes [lo0, lo1, hi0, hi1] -> [lo0, hi0, lo1, hi1]: block 0 then block 1, each in element order.
    const __m512i lane_order = _mm512_setr_epi64(0, 1, 4, 5, 2, 3, 6, 7);
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i].qs));
        const __m128i q1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[i + 1].qs));
        const __m256i packed = _mm256_set_m128i(q1, q0);
        const __m512i both = _mm512_inserti64x4(_mm512_castsi256_si512(packed), _mm256_srli_epi16(packed, 4), 1);
        const __m512i nibbles = _mm512_and_si512(_mm512_permutexvar_epi64(lane_order, both), low);
        const __m512i xq = load_two_q8(x + i);
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), nibbles, xq);
        const __m512i off = _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, xq);
        const __m512 d = two_scales(half(w[i].d) * half(x[i].d), half(w[i + 1].d) * half(x[i + 1].d));
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_sub_epi32(dot, off)), acc);
    }
    float sum = _mm512_reduce_add_ps(acc);
    for (; i < nb; ++i) sum += reference_kernels().dot_q4_0_q8_0(kQK, w + i, x + i);
    return sum;
}

// Signed × signed through VNNI: |w| (unsigned) times x with w's sign.
float dot_q8_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ8_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    const int64_t nb = n / kQK;
    __m512 acc = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 2 <= nb; i += 2) {
        const __m512i wq = load_two_q8(w + i);
        const __m512i xq = load_two_q8(x + i);
        const __m512i wabs = _mm512_abs_epi8(wq);
        const __mmask64 neg = _mm512_movepi8_mask(wq);
        const __m512i xs = _mm512_mask_sub_epi8(xq, neg, _mm512_setzero_si512(), xq);
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), wabs, xs);
        const __m512 d = two_scales(half(w[i].d) * half(x[i].d), half(w[i + 1].d) * half(x[i + 1].d));
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(dot), acc);
    }
    float sum = _mm512_reduce_add_ps(acc);
    for (; i < nb; ++i) sum += reference_kernels().dot_q8_0_q8_0(kQK, w + i, x + i);
    return sum;
}

}  // namespace

const KernelTable& avx512_kernels() {
    static const KernelTable table = [] {
        KernelTable t = avx2_kernels();
        t.isa = "avx512-vnni";
        t.dot_q4_0_q8_0 = dot_q4_0_q8_0;
        t.dot_q8_0_q8_0 = dot_q8_0_q8_0;
        return t;
    }();
    return table;
}

}  // namespace ember::tensor

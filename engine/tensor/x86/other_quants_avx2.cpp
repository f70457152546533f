// AVX2 dot products of the weight types files carry besides Q4_0/Q8_0 and Q4_K/Q5_K/Q6_K: the
// 32-element Q4_1, Q5_0, Q5_1 and IQ4_NL against Q8_0 activations, and Q2_K, Q3_K and IQ4_XS
// (Q2_K, Q3_K_S/M/L and IQ4_XS files) against Q8_K. Each block's integer sum is exact, as the
// scalar twins' (tensor/quant_dots_ref.cpp); only the order of the float sums differs.
#include <immintrin.h>

#include <cstring>

#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"

namespace ember::tensor {
namespace {

inline float half(uint16_t h) { return _cvtsh_ss(h); }

inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline int hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// Σ u·x of 32 unsigned weight quants (< 128) and 32 activations, into 8 int32 lanes.
inline __m256i dot_u8_i8(__m256i u, __m256i x) { return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)); }

// Σ a·x of 32 signed weight values and 32 activations: |a| against x with a's sign.
inline __m256i dot_i8_i8(__m256i a, __m256i x) { return dot_u8_i8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(x, a)); }

// Scales k and k + 1 of eight 16-bit scales, spread over the low and the high lane.
inline __m256i scale_pair(__m128i scales16, int k) {
    const __m256i pick = _mm256_set_m128i(_mm_set1_epi16(int16_t(0x0100 + 0x0202 * (k + 1))),
                                          _mm_set1_epi16(int16_t(0x0100 + 0x0202 * k)));
    return _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(scales16), pick);
}

// The same dots, each lane's 16 elements weighted by that lane's scale (scale_pair()).
inline __m256i scaled_dot_u8(__m256i u, __m256i x, __m256i scales) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), scales);
}
inline __m256i scaled_dot_i8(__m256i a, __m256i x, __m256i scales) {
    return scaled_dot_u8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(x, a), scales);
}

// Q3_K's sixteen 6-bit scales less 32, as 16-bit lanes: the low 4 bits of scale j are nibble
// j / 8 of byte j % 8, the high 2 bits are bits 2·(j / 4) of byte 8 + j % 4.
inline __m256i q3_k_scales16(const uint8_t* packed) {
    int64_t low_bytes;
    int32_t high_bytes;
    std::memcpy(&low_bytes, packed, 8);
    std::memcpy(&high_bytes, packed + 8, 4);
    const __m128i a = _mm_cvtsi64_si128(low_bytes);
    const __m128i low = _mm_and_si128(_mm_unpacklo_epi64(a, _mm_srli_epi16(a, 4)), _mm_set1_epi8(0x0F));
    const __m128i high =
        _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(high_bytes), _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(0x03));
    return _mm256_cvtepi8_epi16(_mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32)));
}

inline __m128i lane(__m256i v, int h) { return h == 0 ? _mm256_castsi256_si128(v) : _mm256_extracti128_si256(v, 1); }

// A 32-element block's 16 packed bytes as 32 nibbles: low nibbles first, then high.
inline __m256i nibbles(const uint8_t* qs) {
    const __m128i packed = load128(qs);
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0F));
}

// Bit j of the 32-bit field at qh as 0x10 in byte j: a Q5 block's fifth bits.
inline __m256i fifth_bits(const uint8_t* qh) {
    uint32_t bits;
    std::memcpy(&bits, qh, 4);
    // Byte j takes byte j / 8 of the field, then keeps bit j % 8.
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(int(bits)),
                                               _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit), _mm256_set1_epi8(0x10));
}

// Σ x over a Q8_0 block, into 8 int32 lanes.
inline __m256i block_sums(__m256i x) { return dot_i8_i8(_mm256_set1_epi8(1), x); }

// The 16 IQ4 levels, in both 128-bit lanes, for a byte shuffle to look nibbles up in.
inline __m256i iq4_table() { return _mm256_broadcastsi128_si256(load128(kIq4Levels)); }

// Q4_1 and Q5_1: unsigned quants with a minimum, which meets the activation's block sum.
template <typename Block, bool kFifthBit>
float dot_with_min_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const Block*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    __m256 acc = _mm256_setzero_ps(), acc_min = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK; ++i) {
        __m256i q = nibbles(w[i].qs);
        if constexpr (kFifthBit) q = _mm256_or_si256(q, fifth_bits(w[i].qh));
        const __m256i xq = load(x[i].qs);
        const float dx = half(x[i].d);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(half(w[i].d) * dx), _mm256_cvtepi32_ps(dot_u8_i8(q, xq)), acc);
        acc_min = _mm256_fmadd_ps(_mm256_set1_ps(half(w[i].m) * dx), _mm256_cvtepi32_ps(block_sums(xq)), acc_min);
    }
    return hsum(acc) + hsum(acc_min);
}

// Q5_0 and IQ4_NL: signed values, one scale per block.
template <typename Block, typename Values>
float dot_signed_q8_0(int64_t n, const void* wv, const void* xv, Values values) {
    auto* w = static_cast<const Block*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK; ++i) {
        const __m256i p = dot_i8_i8(values(w[i]), load(x[i].qs));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(half(w[i].d) * half(x[i].d)), _mm256_cvtepi32_ps(p), acc);
    }
    return hsum(acc);
}

}  // namespace

float dot_q4_1_q8_0_avx2(int64_t n, const void* w, const void* x) { return dot_with_min_q8_0<BlockQ4_1, false>(n, w, x); }
float dot_q5_1_q8_0_avx2(int64_t n, const void* w, const void* x) { return dot_with_min_q8_0<BlockQ5_1, true>(n, w, x); }

float dot_q5_0_q8_0_avx2(int64_t n, const void* w, const void* x) {
    return dot_signed_q8_0<BlockQ5_0>(n, w, x, [](const BlockQ5_0& b) {
        return _mm256_sub_epi8(_mm256_or_si256(nibbles(b.qs), fifth_bits(b.qh)), _mm256_set1_epi8(16));
    });
}

float dot_iq4_nl_q8_0_avx2(int64_t n, const void* w, const void* x) {
    const __m256i table = iq4_table();
    return dot_signed_q8_0<BlockIQ4_NL>(n, w, x, [&](const BlockIQ4_NL& b) { return _mm256_shuffle_epi8(table, nibbles(b.qs)); });
}

// Q2_K: element 128h + 32s + l's quant is bits 2s of qs[32h + l]; group g = e / 16 has scale
// scales[g] & 15 and minimum scales[g] >> 4, which meets the activation's group sum.
float dot_q2_k_q8_k_avx2(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ2_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const __m256i two_bits = _mm256_set1_epi8(0x03);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const __m128i packed = load128(w[i].scales);
        const __m256i scales = _mm256_cvtepu8_epi16(_mm_and_si128(packed, _mm_set1_epi8(0x0F)));
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            const __m256i q = load(w[i].qs + 32 * h);
            const __m128i half_scales = lane(scales, h);
            for (int s = 0; s < 4; ++s) {
                const __m256i u = _mm256_and_si256(_mm256_srli_epi16(q, 2 * s), two_bits);
                acc = _mm256_add_epi32(acc, scaled_dot_u8(u, load(x[i].qs + 128 * h + 32 * s), scale_pair(half_scales, 2 * s)));
            }
        }
        const __m256i mins = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(packed, 4), _mm_set1_epi8(0x0F)));
        const int msum = hsum_i32(_mm256_madd_epi16(mins, load(x[i].bsums)));
        sum += half(w[i].d) * x[i].d * float(hsum_i32(acc));
        sum -= half(w[i].dmin) * x[i].d * float(msum);
    }
    return sum;
}

// Q3_K: Q2_K's two low bits, a third from bit e / 32 of hmask[e % 32]; the value is that 3-bit
// quant less 4, taken here as the unsigned quant against the activation less 4 times its group
// sums.
float dot_q3_k_q8_k_avx2(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ3_K*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const __m256i two_bits = _mm256_set1_epi8(0x03), one = _mm256_set1_epi8(0x01);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const __m256i scales = q3_k_scales16(w[i].scales);
        const __m256i hmask = load(w[i].hmask);
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; ++h) {
            const __m256i q = load(w[i].qs + 32 * h);
            const __m128i half_scales = lane(scales, h);
            for (int s = 0; s < 4; ++s) {
                const __m256i low = _mm256_and_si256(_mm256_srli_epi16(q, 2 * s), two_bits);
                const __m256i high = _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hmask, 4 * h + s), one), 2);
                const __m256i u = _mm256_or_si256(low, high);
                acc = _mm256_add_epi32(acc, scaled_dot_u8(u, load(x[i].qs + 128 * h + 32 * s), scale_pair(half_scales, 2 * s)));
            }
        }
        const int offset = hsum_i32(_mm256_madd_epi16(scales, load(x[i].bsums)));
        sum += half(w[i].d) * x[i].d * float(hsum_i32(acc) - 4 * offset);
    }
    return sum;
}

// IQ4_XS: eight sub-blocks of 32, each 16 bytes of IQ4_NL nibbles and a 6-bit scale less 32.
// One 32-byte load holds sub-blocks 2p and 2p + 1 in its two lanes; the activation's halves are
// paired to match.
float dot_iq4_xs_q8_k_avx2(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockIQ4_XS*>(wv);
    auto* x = static_cast<const BlockQ8_K*>(xv);
    const __m256i table = iq4_table(), nibble = _mm256_set1_epi8(0x0F);
    float sum = 0.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        alignas(16) int16_t ls[8];
        for (int j = 0; j < 8; ++j)
            ls[j] = int16_t((((w[i].scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((w[i].scales_h >> (2 * j)) & 3) << 4)) - 32);
        const __m128i scales = _mm_load_si128(reinterpret_cast<const __m128i*>(ls));
        __m256i acc = _mm256_setzero_si256();
        for (int p = 0; p < 4; ++p) {
            const __m256i pair = scale_pair(scales, 2 * p);
            const __m256i q = load(w[i].qs + 32 * p);
            const __m256i lo = _mm256_shuffle_epi8(table, _mm256_and_si256(q, nibble));
            const __m256i hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), nibble));
            const int8_t* xq = x[i].qs + 64 * p;
            const __m256i x_lo = _mm256_set_m128i(load128(xq + 32), load128(xq));
            const __m256i x_hi = _mm256_set_m128i(load128(xq + 48), load128(xq + 16));
            acc = _mm256_add_epi32(acc, _mm256_add_epi32(scaled_dot_i8(lo, x_lo, pair), scaled_dot_i8(hi, x_hi, pair)));
        }
        sum += half(w[i].d) * x[i].d * float(hsum_i32(acc));
    }
    return sum;
}

}  // namespace ember::tensor

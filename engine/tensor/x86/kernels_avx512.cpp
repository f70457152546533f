// AVX-512 (F, BW, VL, VNNI, VBMI) kernels for the integer dot products: four stored Q4_0 or
// IQ4_NL blocks per 512-bit register, or sixteen of the re-laid Q4_0_X16 ones (tensor/q4_0_x16.h); everything
// else comes from the AVX2 table. Compiled with those flags only for this file; used only when
// the CPU reports them (cpu_dispatch.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "common/cpu_hints.h"
#include "tensor/grouped_rows.h"
#include "tensor/kernels.h"
#include "tensor/q4_0_x16.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/r8_lanes.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

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

// Q4_0 × Q8_0 four blocks (128 values, 72 weight bytes) at a time. The activation row is
// prepared once into a layout the weight bytes can meet without shuffles:
//   per group of four blocks, 256 bytes:
//   [  0, 64) int8 x[k][0..15] for blocks k = 0..3   (meets the low nibbles)
//   [ 64,128) int8 x[k][16..31]                      (meets the high nibbles)
//   [128,192) float d_x[k], each repeated for the four dword lanes of its block
//   [192,256) int32 -8 · (sum of the x bytes in each lane), the nibbles' +8 offset taken off
// It follows the plain Q8_0 blocks, at the next 64-byte boundary.
constexpr int64_t kGroup = 4;
constexpr size_t kGroupBytes = 256;

size_t q8_prefix_bytes(int64_t n) { return (size_t(n / kQK) * sizeof(BlockQ8_0) + 63) / 64 * 64; }

// Then, at the next 64-byte boundary, the layout Q4_0_X16 weights meet, per run of 16 blocks
// (the last run padded with zero lanes), 640 bytes:
//   [128k, 128k + 64)      int8 x[i][4k..4k+3] in dword lane i, for block i of the run, k = 0..3
//   [128k + 64, 128k + 128) int8 x[i][16+4k..16+4k+3]
//   [512, 576) float d_x[i]
//   [576, 640) int32 -8 · (sum of block i's x bytes)
constexpr size_t kRunBytes = 640;

size_t x16_prefix_bytes(int64_t n) {
    return (q8_prefix_bytes(n) + size_t(n / (kQK * kGroup)) * kGroupBytes + 63) / 64 * 64;
}

int64_t x16_runs(int64_t n) { return (n / kQK + kX16Blocks - 1) / kX16Blocks; }

size_t q8_activation_bytes(int64_t n) { return x16_prefix_bytes(n) + size_t(x16_runs(n)) * kRunBytes; }

void prepare_x16_activation(const BlockQ8_0* blocks, uint8_t* out, int64_t n) {
    const int64_t n_blocks = n / kQK;
    for (int64_t r = 0; r < x16_runs(n); ++r) {
        uint8_t* p = out + size_t(r) * kRunBytes;
        std::memset(p, 0, kRunBytes);
        auto* d = reinterpret_cast<float*>(p + 512);
        auto* off = reinterpret_cast<int32_t*>(p + 576);
        for (int64_t i = 0; i < std::min(kX16Blocks, n_blocks - r * kX16Blocks); ++i) {
            const BlockQ8_0& b = blocks[r * kX16Blocks + i];
            for (int k = 0; k < 4; ++k) {
                std::memcpy(p + 128 * k + 4 * i, b.qs + 4 * k, 4);
                std::memcpy(p + 128 * k + 64 + 4 * i, b.qs + 16 + 4 * k, 4);
            }
            int sum = 0;
            for (int8_t q : b.qs) sum += q;
            d[i] = half(b.d);
            off[i] = -8 * sum;
        }
    }
}

void prepare_q8_activation(const float* x, void* out, int64_t n) {
    quantize_q8_0_avx2(x, out, n);
    auto* blocks = static_cast<const BlockQ8_0*>(out);
    uint8_t* packed = static_cast<uint8_t*>(out) + q8_prefix_bytes(n);
    for (int64_t g = 0; g < n / (kQK * kGroup); ++g) {
        uint8_t* p = packed + size_t(g) * kGroupBytes;
        auto* lo = reinterpret_cast<int8_t*>(p);
        auto* hi = reinterpret_cast<int8_t*>(p + 64);
        auto* d = reinterpret_cast<float*>(p + 128);
        auto* off = reinterpret_cast<int32_t*>(p + 192);
        for (int k = 0; k < kGroup; ++k) {
            const BlockQ8_0& b = blocks[g * kGroup + k];
            for (int m = 0; m < 16; ++m) {
                lo[16 * k + m] = b.qs[m];
                hi[16 * k + m] = b.qs[m + 16];
            }
            for (int l = 0; l < 4; ++l) {
                d[4 * k + l] = half(b.d);
                int sum = 0;
                for (int j = 0; j < 4; ++j) sum += b.qs[4 * l + j] + b.qs[16 + 4 * l + j];
                off[4 * k + l] = -8 * sum;
            }
        }
    }
    prepare_x16_activation(blocks, static_cast<uint8_t*>(out) + x16_prefix_bytes(n), n);
}

// Byte j of the result takes qs[j % 16] of block j / 16 from the 72 bytes of four blocks, read
// as two overlapping loads at offsets 0 and 8 (so nothing past the group is touched).
__m512i qs_gather_index() {
    alignas(64) uint8_t idx[64];
    for (int j = 0; j < 64; ++j) {
        const int src = 18 * (j / 16) + 2 + j % 16;
        idx[j] = uint8_t(src < 64 ? src : 64 + (src - 8));
    }
    return _mm512_load_si512(idx);
}

// Word j (< 16) of the result is block j / 4's fp16 scale, at byte 18 * (j / 4).
__m512i scale_gather_index() {
    alignas(64) uint16_t idx[32] = {};
    for (int j = 0; j < 16; ++j) idx[j] = uint16_t(9 * (j / 4));
    return _mm512_load_si512(idx);
}

// How four 18-byte blocks' nibbles meet the prepared activation: Q4_0's as they are, 8 taken off
// through the prepared offsets (-8 · the lane's x sum); IQ4_NL's looked up among its levels plus
// 128, so 16 times those offsets take the 128 · sum back off. Integer sums are exact either way.
struct Q4_0Nibbles {
    __m512i decode(__m512i nibbles) const { return nibbles; }
    __m512i offset(__m512i prepared) const { return prepared; }
};
struct Iq4NlNibbles {
    __m512i levels_plus_128 = [] {
        alignas(16) uint8_t levels[16];
        for (int i = 0; i < 16; ++i) levels[i] = uint8_t(kIq4Levels[i] + 128);
        return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(levels)));
    }();
    __m512i decode(__m512i nibbles) const { return _mm512_shuffle_epi8(levels_plus_128, nibbles); }
    __m512i offset(__m512i prepared) const { return _mm512_slli_epi32(prepared, 4); }
};

// One row of 18-byte blocks (Q4_0 or IQ4_NL) against kTokens prepared activations, four blocks
// at a time; a tail of fewer than four blocks goes to the reference kernel.
template <int kTokens, class Nibbles>
void dot_nibble_groups(int64_t n, const uint8_t* w, const void* const* xv, float* out, const Nibbles& nibbles,
                       float (*tail)(int64_t, const void*, const void*)) {
    const int64_t n_groups = n / (kQK * kGroup);
    const size_t prefix = q8_prefix_bytes(n);
    static const __m512i qs_idx = qs_gather_index();
    static const __m512i d_idx = scale_gather_index();
    const __m512i low = _mm512_set1_epi8(0x0F);
    __m512 acc[kTokens];
    for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t g = 0; g < n_groups; ++g) {
        const uint8_t* wg = w + g * 72;
        const __m512i a = _mm512_loadu_si512(wg);
        const __m512i b = _mm512_loadu_si512(wg + 8);
        const __m512i qs = _mm512_permutex2var_epi8(a, qs_idx, b);
        const __m512i lo = nibbles.decode(_mm512_and_si512(qs, low));
        const __m512i hi = nibbles.decode(_mm512_and_si512(_mm512_srli_epi16(qs, 4), low));
        const __m512 dw = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(d_idx, a)));
        for (int t = 0; t < kTokens; ++t) {
            const uint8_t* xg = static_cast<const uint8_t*>(xv[t]) + prefix + size_t(g) * kGroupBytes;
            __m512i dot = nibbles.offset(_mm512_loadu_si512(xg + 192));
            dot = _mm512_dpbusd_epi32(dot, lo, _mm512_loadu_si512(xg));
            dot = _mm512_dpbusd_epi32(dot, hi, _mm512_loadu_si512(xg + 64));
            const __m512 d = _mm512_mul_ps(dw, _mm512_loadu_ps(xg + 128));
            acc[t] = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(dot), acc[t]);
        }
    }
    const int64_t done = n_groups * kGroup;
    for (int t = 0; t < kTokens; ++t) {
        out[t] = _mm512_reduce_add_ps(acc[t]);
        if (done * kQK < n) out[t] += tail(n - done * kQK, w + done * 18, static_cast<const BlockQ8_0*>(xv[t]) + done);
    }
}

float dot_q4_0_q8_0(int64_t n, const void* wv, const void* xv) {
    float out;
    dot_nibble_groups<1>(n, static_cast<const uint8_t*>(wv), &xv, &out, Q4_0Nibbles{}, reference_kernels().dot_q4_0_q8_0);
    return out;
}

float dot_iq4_nl_q8_0(int64_t n, const void* wv, const void* xv) {
    static const Iq4NlNibbles nibbles;
    float out;
    dot_nibble_groups<1>(n, static_cast<const uint8_t*>(wv), &xv, &out, nibbles, reference_kernels().dot_iq4_nl_q8_0);
    return out;
}

void dot_iq4_nl_q8_0_x4(int64_t n, const void* wv, const void* const* xv, float* out) {
    static const Iq4NlNibbles nibbles;
    dot_nibble_groups<4>(n, static_cast<const uint8_t*>(wv), xv, out, nibbles, reference_kernels().dot_iq4_nl_q8_0);
}

void dot4_q4_0_q8_0(int64_t n, const void* const* wv, const void* xv, float* out) {
    const uint8_t* packed = static_cast<const uint8_t*>(xv) + q8_prefix_bytes(n);
    const int64_t n_groups = n / (kQK * kGroup);
    static const __m512i qs_idx = qs_gather_index();
    static const __m512i d_idx = scale_gather_index();
    const __m512i low = _mm512_set1_epi8(0x0F);
    const uint8_t* w[4];
    __m512 acc[4];
    for (int r = 0; r < 4; ++r) {
        w[r] = static_cast<const uint8_t*>(wv[r]);
        acc[r] = _mm512_setzero_ps();
    }
    for (int64_t g = 0; g < n_groups; ++g) {
        const uint8_t* xg = packed + size_t(g) * kGroupBytes;
        const __m512i x_lo = _mm512_loadu_si512(xg), x_hi = _mm512_loadu_si512(xg + 64);
        const __m512 x_d = _mm512_loadu_ps(xg + 128);
        const __m512i x_off = _mm512_loadu_si512(xg + 192);
        for (int r = 0; r < 4; ++r) {
            const uint8_t* wg = w[r] + g * 72;
            const __m512i a = _mm512_loadu_si512(wg);
            const __m512i b = _mm512_loadu_si512(wg + 8);
            const __m512i qs = _mm512_permutex2var_epi8(a, qs_idx, b);
            const __m512i lo = _mm512_and_si512(qs, low);
            const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(qs, 4), low);
            __m512i dot = _mm512_dpbusd_epi32(x_off, lo, x_lo);
            dot = _mm512_dpbusd_epi32(dot, hi, x_hi);
            const __m512 dw = _mm512_cvtph_ps(_mm512_castsi512_si256(_mm512_permutexvar_epi16(d_idx, a)));
            acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(dw, x_d), _mm512_cvtepi32_ps(dot), acc[r]);
        }
    }
    const int64_t done = n_groups * kGroup;
    for (int r = 0; r < 4; ++r) {
        out[r] = _mm512_reduce_add_ps(acc[r]);
        if (done * kQK < n)
            out[r] += reference_kernels().dot_q4_0_q8_0(n - done * kQK, w[r] + done * 18,
                                                        static_cast<const BlockQ8_0*>(xv) + done);
    }
}

// One run of m Q4_0_X16 blocks against its 640 activation bytes: sixteen dword lanes, one per
// block, each block's integer dot product in its lane, then scaled. The loads are masked to the
// run's m lanes (all sixteen but in a row's last run), so nothing past the row is read and the
// lanes past m are zeros.
inline __m512 x16_run(const uint8_t* w, const uint8_t* x, int64_t m, __m512 acc) {
    const __m512i low = _mm512_set1_epi8(0x0F);
    const __mmask16 lanes = __mmask16((1u << m) - 1);
    __m512i dot_lo = _mm512_loadu_si512(x + 576), dot_hi = _mm512_setzero_si512();
    for (int k = 0; k < 4; ++k) {
        const __m512i q = _mm512_maskz_loadu_epi32(lanes, w + x16_word_offset(m, 0, k));
        dot_lo = _mm512_dpbusd_epi32(dot_lo, _mm512_and_si512(q, low), _mm512_loadu_si512(x + 128 * k));
        dot_hi = _mm512_dpbusd_epi32(dot_hi, _mm512_and_si512(_mm512_srli_epi16(q, 4), low),
                                     _mm512_loadu_si512(x + 128 * k + 64));
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(lanes, w));
    const __m512 d = _mm512_mul_ps(dw, _mm512_loadu_ps(x + 512));
    return _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(_mm512_add_epi32(dot_lo, dot_hi)), acc);
}

float dot_q4_0x16_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const uint8_t*>(wv);
    const uint8_t* x = static_cast<const uint8_t*>(xv) + x16_prefix_bytes(n);
    const int64_t n_blocks = n / kQK;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t r = 0; r < x16_runs(n); ++r)
        acc = x16_run(w + size_t(r) * kX16RunBytes, x + size_t(r) * kRunBytes,
                      std::min(kX16Blocks, n_blocks - r * kX16Blocks), acc);
    return _mm512_reduce_add_ps(acc);
}

void dot4_q4_0x16_q8_0(int64_t n, const void* const* wv, const void* xv, float* out, size_t prefetch) {
    const uint8_t* x = static_cast<const uint8_t*>(xv) + x16_prefix_bytes(n);
    const int64_t n_blocks = n / kQK;
    const uint8_t* w[4];
    __m512 acc[4];
    for (int r = 0; r < 4; ++r) {
        w[r] = static_cast<const uint8_t*>(wv[r]);
        acc[r] = _mm512_setzero_ps();
    }
    for (int64_t run = 0; run < x16_runs(n); ++run) {
        const int64_t m = std::min(kX16Blocks, n_blocks - run * kX16Blocks);
        const uint8_t* xr = x + size_t(run) * kRunBytes;
        for (int r = 0; r < 4; ++r) {
            const uint8_t* wr = w[r] + size_t(run) * kX16RunBytes;
            if (prefetch)
                for (size_t c = 0; c < kX16RunBytes; c += 64) _mm_prefetch(reinterpret_cast<const char*>(wr + prefetch + c), _MM_HINT_T0);
            acc[r] = x16_run(wr, xr, m, acc[r]);
        }
    }
    for (int r = 0; r < 4; ++r) out[r] = _mm512_reduce_add_ps(acc[r]);
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

// y += a · row for a Q4_0 row: sixteen values per register, one FMA each (as the scalar twin).
void axpy_q4_0(int64_t n, float a, const void* xv, float* y) {
    auto* x = static_cast<const BlockQ4_0*>(xv);
    const __m128i low = _mm_set1_epi8(0x0F);
    const __m512i eight = _mm512_set1_epi32(8);
    for (int64_t b = 0; b < n / kQK; ++b) {
        const __m512 d = _mm512_set1_ps(a * half(x[b].d));
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(x[b].qs));
        const __m128i lo = _mm_and_si128(packed, low);
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(packed, 4), low);
        float* yb = y + b * kQK;
        const __m512 qlo = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(lo), eight));
        const __m512 qhi = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(hi), eight));
        _mm512_storeu_ps(yb, _mm512_fmadd_ps(d, qlo, _mm512_loadu_ps(yb)));
        _mm512_storeu_ps(yb + 16, _mm512_fmadd_ps(d, qhi, _mm512_loadu_ps(yb + 16)));
    }
}

// Eight rows' products with their blocks' scales, a[r] · d, for blocks b0 .. b0 + m (m ≤ 16):
// one gather of the sixteen scales a row, rather than a scalar conversion and a broadcast for
// each block of each row, which cost as much as the block's products. The masked-off lanes of
// a last, partial run read nothing past the row.
template <class Block>
void scale_run(const Block* const* x, const float* a, int64_t b0, int64_t m, float (*s)[16]) {
    const __m512i offsets = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                               _mm512_set1_epi32(int(sizeof(Block))));
    const __mmask16 lanes = __mmask16((1u << m) - 1);
    for (int r = 0; r < 8; ++r) {
        const __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), lanes, offsets, x[r] + b0, 1);
        _mm512_store_ps(s[r], _mm512_mul_ps(_mm512_set1_ps(a[r]), _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words))));
    }
}

// How the row sums below meet a block of each row type: its 32 values as two vectors of floats,
// in an order of outputs of the type's choosing, and that order to and from the outputs'.
//
// Q4_0: the block is broadcast to the four 128-bit lanes and lane i shifted right by 8·(i / 4)
// bits: its low byte is then byte 4·(i % 4) + i / 4, so the nibbles arrive in a 4 × 4 transposed
// order without a cross-lane widening per row. The shifted bytes index a lookup, which reads only
// their low four bits: nibble q selects q - 8 as a float, exactly what subtracting and converting
// gives. The transposition is its own inverse.
struct Q4_0Blocks {
    using Block = BlockQ4_0;
    const __m512 values = _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
    const __m512i transposed = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512i low_shift = _mm512_setr_epi32(0, 0, 0, 0, 8, 8, 8, 8, 16, 16, 16, 16, 24, 24, 24, 24);
    const __m512i high_shift = _mm512_add_epi32(low_shift, _mm512_set1_epi32(4));
    void unpack(const Block& b, __m512& lo, __m512& hi) const {
        const __m512i q = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)));
        lo = _mm512_permutexvar_ps(_mm512_srlv_epi32(q, low_shift), values);
        hi = _mm512_permutexvar_ps(_mm512_srlv_epi32(q, high_shift), values);
    }
    __m512 reorder(__m512 v) const { return _mm512_permutexvar_ps(transposed, v); }
};

// Q8_0: each half widened and converted, in the outputs' own order.
struct Q8_0Blocks {
    using Block = BlockQ8_0;
    void unpack(const Block& b, __m512& lo, __m512& hi) const {
        lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs))));
        hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs + 16))));
    }
    __m512 reorder(__m512 v) const { return v; }
};

// Eight rows into y, a block of outputs at a time held in registers over the rows (unrolled):
// per block and row, the unpacking and two FMAs.
template <class Blocks>
void axpy8(int64_t n, const float* a, const void* const* xv, float* y) {
    using Block = typename Blocks::Block;
    const Blocks blocks;
    const Block* x[8];
    for (int r = 0; r < 8; ++r) x[r] = static_cast<const Block*>(xv[r]);
    const int64_t nb = n / kQK;
    alignas(64) float s[8][16];
    for (int64_t b0 = 0; b0 < nb; b0 += 16) {
        const int64_t m = std::min<int64_t>(16, nb - b0);
        scale_run(x, a, b0, m, s);
        for (int64_t i = 0; i < m; ++i) {
            float* yb = y + (b0 + i) * kQK;
            __m512 y0 = blocks.reorder(_mm512_loadu_ps(yb));
            __m512 y1 = blocks.reorder(_mm512_loadu_ps(yb + 16));
#pragma GCC unroll 8
            for (int r = 0; r < 8; ++r) {
                const __m512 d = _mm512_set1_ps(s[r][i]);
                __m512 lo, hi;
                blocks.unpack(x[r][b0 + i], lo, hi);
                y0 = _mm512_fmadd_ps(d, lo, y0);
                y1 = _mm512_fmadd_ps(d, hi, y1);
            }
            _mm512_storeu_ps(yb, blocks.reorder(y0));
            _mm512_storeu_ps(yb + 16, blocks.reorder(y1));
        }
    }
}

// The other way round: one row's block is unpacked once and meets the scaled coefficients of up
// to eight tokens, whose block outputs stay in registers over the rows. Lanes of absent tokens
// get zero coefficients and are not stored.
template <class Blocks>
void axpy_tokens(int64_t n, const uint8_t* base, size_t row_bytes, const int32_t* ids, int64_t n_ids, const float* c,
                 int m, float* const* y) {
    using Block = typename Blocks::Block;
    const Blocks blocks;
    const __mmask8 tokens = __mmask8((1u << m) - 1);
    alignas(32) float s[8];
    for (int64_t b = 0; b < n / kQK; ++b) {
        __m512 acc[16];
        for (auto& a : acc) a = _mm512_setzero_ps();
        for (int64_t j = 0; j < n_ids; ++j) {
            const Block& block = reinterpret_cast<const Block*>(base + size_t(ids[j]) * row_bytes)[b];
            const __m256 coef = _mm256_maskz_loadu_ps(tokens, c + size_t(ids[j]) * size_t(m));
            _mm256_store_ps(s, _mm256_mul_ps(coef, _mm256_set1_ps(half(block.d))));
            // The eight scales are broadcast from memory (load ports), not shuffled out of the
            // register (the shuffle port the Q4_0 lookups need).
            compiler_barrier();
            __m512 lo, hi;
            blocks.unpack(block, lo, hi);
#pragma GCC unroll 8
            for (int t = 0; t < 8; ++t) {
                const __m512 d = _mm512_set1_ps(s[t]);
                acc[2 * t] = _mm512_fmadd_ps(d, lo, acc[2 * t]);
                acc[2 * t + 1] = _mm512_fmadd_ps(d, hi, acc[2 * t + 1]);
            }
        }
#pragma GCC unroll 8
        for (int t = 0; t < 8; ++t) {
            if (t >= m) break;
            float* yb = y[t] + b * kQK;
            _mm512_storeu_ps(yb, _mm512_add_ps(_mm512_loadu_ps(yb), blocks.reorder(acc[2 * t])));
            _mm512_storeu_ps(yb + 16, _mm512_add_ps(_mm512_loadu_ps(yb + 16), blocks.reorder(acc[2 * t + 1])));
        }
    }
}

// Q4_0_R8 groups (tensor/grouped_rows.h) against tokens whose activations carry the Q4_0_X16
// layout's per-block float scales and -8·Σx offsets. Lanes 2r and 2r + 1 belong to row r; the
// offset goes into lane 2r only, as the two lanes are added at the end.

// One unit's weights: the rows' scales in lanes 2r, 2r + 1, and four words of unsigned quants in
// the order of the activation's broadcasts (Q4_0Activation::x).
struct R8Unit {
    __m512 dw;
    __m512i w[4];
};

// Q4_0_R8: the low and high nibbles of its two words.
inline R8Unit q4_0_unit(const uint8_t* unit) {
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    R8Unit u;
    u.dw = r8::row_pairs(unit);
    for (int c = 0; c < 2; ++c) {
        const __m512i q = _mm512_loadu_si512(unit + 16 + 64 * c);
        u.w[2 * c] = _mm512_and_si512(q, nibble);
        u.w[2 * c + 1] = _mm512_and_si512(_mm512_srli_epi64(q, 4), nibble);
    }
    return u;
}

// Q8_0_R8: the quants as unsigned bytes w + 128; chunk c meets the activation's bytes 8c..8c+7.
inline R8Unit q8_0_unit(const uint8_t* unit) {
    const __m512i bias = _mm512_set1_epi8(char(0x80));
    R8Unit u;
    u.dw = r8::row_pairs(unit);
    for (int c = 0; c < 4; ++c) u.w[2 * (c % 2) + c / 2] = _mm512_xor_si512(_mm512_loadu_si512(unit + 16 + 64 * c), bias);
    return u;
}

// One token's block i: the eight-byte broadcasts that meet R8Unit::w[0..3] (its bytes 0, 16, 8
// and 24 onwards), and the block's scale and offset from the row's Q4_0_X16 runs.
struct Q4_0Activation {
    __m512i x[4];
    float dx;
    int32_t offset;
};

inline Q4_0Activation q4_0_activation(const uint8_t* row, int64_t n, int64_t i) {
    const int8_t* xq = reinterpret_cast<const BlockQ8_0*>(row)[i].qs;
    const uint8_t* run = row + x16_prefix_bytes(n) + size_t(i / kX16Blocks) * kRunBytes;
    const size_t lane = size_t(i % kX16Blocks);
    Q4_0Activation a;
    for (int k = 0; k < 4; ++k) {
        int64_t bytes;
        std::memcpy(&bytes, xq + 16 * (k % 2) + 8 * (k / 2), 8);
        a.x[k] = _mm512_set1_epi64(bytes);
    }
    std::memcpy(&a.offset, run + 576 + 4 * lane, 4);
    std::memcpy(&a.dx, run + 512 + 4 * lane, 4);
    return a;
}

// acc plus the unit's eight row products with one token's block, its quants biased by
// kBias: Q4_0's +8 comes off as the block's -8·Σx offset, Q8_0's +128 as 16 times it.
template <int kBias>
inline __m512 unit_dot(const R8Unit& u, const Q4_0Activation& a, __m512 acc) {
    __m512i sum = _mm512_setzero_si512();
    for (int k = 0; k < 4; ++k) sum = _mm512_dpbusd_epi32(sum, u.w[k], a.x[k]);
    sum = _mm512_mask_add_epi32(sum, 0x5555, sum, _mm512_set1_epi32(kBias / 8 * a.offset));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum), _mm512_mul_ps(u.dw, _mm512_set1_ps(a.dx)), acc);
}

// The two grouped types on these activations, for the tile and four-group drivers below.
struct Q4_0R8 {
    static constexpr size_t kUnitBytes = kQ4_0R8UnitBytes;
    static R8Unit unit(const uint8_t* p) { return q4_0_unit(p); }
    static __m512 dot(const R8Unit& u, const Q4_0Activation& a, __m512 acc) { return unit_dot<8>(u, a, acc); }
};
struct Q8_0R8 {
    static constexpr size_t kUnitBytes = kQ8_0R8UnitBytes;
    static R8Unit unit(const uint8_t* p) { return q8_0_unit(p); }
    static __m512 dot(const R8Unit& u, const Q4_0Activation& a, __m512 acc) { return unit_dot<128>(u, a, acc); }
};

template <int T, typename Kind>
void gemm_r8_tile(int64_t n, const uint8_t* group, const uint8_t* x, size_t x_stride, float* y, size_t y_stride) {
    __m512 acc[T];
    for (int t = 0; t < T; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / kQK; ++i) {
        const auto u = Kind::unit(group + size_t(i) * Kind::kUnitBytes);
        for (int t = 0; t < T; ++t) acc[t] = Kind::dot(u, q4_0_activation(x + size_t(t) * x_stride, n, i), acc[t]);
    }
    r8::store_rows(acc, y, y_stride);
}

// The single-token tile's arithmetic for four groups at once, each unit's bytes prefetched
// `prefetch` ahead in its stream: the activation is read once for the four, and four runs of
// memory are read at once.
template <typename Kind>
void gemv4_r8(int64_t n, const void* const* groups, const uint8_t* x, float* const* y, size_t prefetch) {
    __m512 acc[4][1];
    for (int s = 0; s < 4; ++s) acc[s][0] = _mm512_setzero_ps();
    for (int64_t i = 0; i < n / kQK; ++i) {
        const Q4_0Activation a = q4_0_activation(x, n, i);
        for (int s = 0; s < 4; ++s) {
            const uint8_t* unit = static_cast<const uint8_t*>(groups[s]) + size_t(i) * Kind::kUnitBytes;
            r8::prefetch_unit(unit + prefetch, Kind::kUnitBytes);
            acc[s][0] = Kind::dot(Kind::unit(unit), a, acc[s][0]);
        }
    }
    for (int s = 0; s < 4; ++s) r8::store_rows(acc[s], y[s], 0);
}

template <typename Kind>
void gemm_r8(int64_t n, const void* group, const uint8_t* x, size_t x_stride, int64_t n_tokens, float* y, size_t y_stride) {
    const auto* g = static_cast<const uint8_t*>(group);
    for_each_tile<8>(n_tokens, [&](int64_t t, auto size) {
        gemm_r8_tile<decltype(size)::value, Kind>(n, g, x + size_t(t) * x_stride, x_stride, y + size_t(t) * y_stride, y_stride);
    });
}

}  // namespace

const KernelTable& avx512_kernels() {
    static const KernelTable table = [] {
        KernelTable t = avx2_kernels();
        t.isa = "avx512";
        t.dot_q4_0_q8_0 = dot_q4_0_q8_0;
        t.q8_activation_bytes = q8_activation_bytes;
        t.prepare_q8_activation = prepare_q8_activation;
        t.dot_q8_0_q8_0 = dot_q8_0_q8_0;
        t.dot4_q4_0_q8_0 = dot4_q4_0_q8_0;
        t.axpy_q4_0 = axpy_q4_0;
        t.axpy8_q4_0 = axpy8<Q4_0Blocks>;
        t.axpy8_q8_0 = axpy8<Q8_0Blocks>;
        t.axpy_tokens_q4_0 = axpy_tokens<Q4_0Blocks>;
        t.axpy_tokens_q8_0 = axpy_tokens<Q8_0Blocks>;
        t.interleave_q4_0 = true;
        t.dot_q4_0x16_q8_0 = dot_q4_0x16_q8_0;
        t.dot4_q4_0x16_q8_0 = dot4_q4_0x16_q8_0;
        t.dot_q4_k_q8_k = dot_q4_k_q8_k_avx512;
        t.dot_q5_k_q8_k = dot_q5_k_q8_k_avx512;
        t.dot_q4_k_q8_k_x4 = dot_q4_k_q8_k_x4_avx512;
        t.dot_q5_k_q8_k_x4 = dot_q5_k_q8_k_x4_avx512;
        t.dot_q6_k_q8_k = dot_q6_k_q8_k_avx512;
        t.dot_q6_k_q8_k_x4 = dot_q6_k_q8_k_x4_avx512;
        t.dot_iq4_xs_q8_k = dot_iq4_xs_q8_k_avx512;
        t.dot_iq4_xs_q8_k_x4 = dot_iq4_xs_q8_k_x4_avx512;
        t.dot_q2_k_q8_k = dot_q2_k_q8_k_avx512;
        t.dot_q2_k_q8_k_x4 = dot_q2_k_q8_k_x4_avx512;
        t.dot_iq4_nl_q8_0 = dot_iq4_nl_q8_0;
        t.dot_iq4_nl_q8_0_x4 = dot_iq4_nl_q8_0_x4;
        t.group_q4_0 = true;
        t.group_q4_k = true;
        t.group_q5_k = true;
        t.group_q6_k = true;
        t.gemm_q4_0_r8_q8_0 = gemm_r8<Q4_0R8>;
        t.gemv4_q4_0_r8_q8_0 = gemv4_r8<Q4_0R8>;
        t.group_q8_0 = true;
        t.gemm_q8_0_r8_q8_0 = gemm_r8<Q8_0R8>;
        t.gemv4_q8_0_r8_q8_0 = gemv4_r8<Q8_0R8>;
        t.gemm_q4_k_r8_q8_k = gemm_q4_k_r8_q8_k_avx512;
        t.gemm_q5_k_r8_q8_k = gemm_q5_k_r8_q8_k_avx512;
        t.gemm_q6_k_r8_q8_k = gemm_q6_k_r8_q8_k_avx512;
        t.gemv4_q4_k_r8_q8_k = gemv4_q4_k_r8_q8_k_avx512;
        t.gemv4_q5_k_r8_q8_k = gemv4_q5_k_r8_q8_k_avx512;
        t.gemv4_q6_k_r8_q8_k = gemv4_q6_k_r8_q8_k_avx512;
        return t;
    }();
    return table;
}

}  // namespace ember::tensor

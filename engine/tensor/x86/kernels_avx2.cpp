// AVX2 + FMA + F16C kernels. Compiled with those flags only for this file; used only when the
// CPU reports all three (cpu_dispatch.cpp).
#include <immintrin.h>

#include <bit>
#include <cstring>

#include "common/cpu_hints.h"
#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/quant_blocks.h"
#include "tensor/x86/kernels_x86.h"
#include "tensor/x86/simd_common.h"

namespace ember::tensor {
namespace {

float dot_f32(int64_t n, const float* w, const float* x) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; ++k)
            acc[k] = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8 * k), _mm256_loadu_ps(x + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), acc[0]);
    float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; ++i) sum += w[i] * x[i];
    return sum;
}

inline __m256 load_f16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

float dot_f16(int64_t n, const uint16_t* w, const uint16_t* x) {
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; ++k)
            acc[k] = _mm256_fmadd_ps(load_f16(w + i + 8 * k), load_f16(x + i + 8 * k), acc[k]);
    for (; i + 8 <= n; i += 8) acc[0] = _mm256_fmadd_ps(load_f16(w + i), load_f16(x + i), acc[0]);
    float sum = hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
    for (; i < n; ++i) sum += half(w[i]) * half(x[i]);
    return sum;
}

inline __m256 load_bf16(const uint16_t* p) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

float dot_bf16(int64_t n, const uint16_t* w, const uint16_t* x) {
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(load_bf16(w + i), load_bf16(x + i), acc0);
        acc1 = _mm256_fmadd_ps(load_bf16(w + i + 8), load_bf16(x + i + 8), acc1);
    }
    float sum = hsum(_mm256_add_ps(acc0, acc1));
    for (; i < n; ++i) sum += bf16_to_f32(w[i]) * bf16_to_f32(x[i]);
    return sum;
}

// Signed int8 × int8 dot of 32 pairs into 8 int32 lanes, through maddubs (which needs an
// unsigned left operand): |a| · (b with a's sign).
inline __m256i dot_i8_pairs(__m256i a, __m256i b) {
    const __m256i ua = _mm256_sign_epi8(a, a);
    const __m256i sb = _mm256_sign_epi8(b, a);
    const __m256i p16 = _mm256_maddubs_epi16(ua, sb);
    return _mm256_madd_epi16(p16, _mm256_set1_epi16(1));
}

inline __m256i q4_0_bytes(const uint8_t* qs) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    const __m256i nibbles = _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
    return _mm256_sub_epi8(nibbles, _mm256_set1_epi8(8));
}

// One accumulator, summed in block order, as GGML's AVX2 kernel does: PowerInfer's reference
// outputs depend on this rounding order.
float dot_q4_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ4_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK; ++i) {
        const __m256i p = dot_i8_pairs(q4_0_bytes(w[i].qs), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs)));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(half(w[i].d) * half(x[i].d)), _mm256_cvtepi32_ps(p), acc);
    }
    return hsum(acc);
}

float dot_q8_0_q8_0(int64_t n, const void* wv, const void* xv) {
    auto* w = static_cast<const BlockQ8_0*>(wv);
    auto* x = static_cast<const BlockQ8_0*>(xv);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t i = 0; i < n / kQK; ++i) {
        const __m256i p = dot_i8_pairs(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[i].qs)),
                                       _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[i].qs)));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(half(w[i].d) * half(x[i].d)), _mm256_cvtepi32_ps(p), acc);
    }
    return hsum(acc);
}

}  // namespace

// Scale 127 / max and round half to even, bit-identical to the scalar twin.
void quantize_q8_0_avx2(const float* x, void* yv, int64_t n) {
    auto* y = static_cast<BlockQ8_0*>(yv);
    const __m256 sign_mask = _mm256_set1_ps(-0.0f);
    for (int64_t i = 0; i < n / kQK; ++i) {
        __m256 v[4];
        __m256 amax = _mm256_setzero_ps();
        for (int k = 0; k < 4; ++k) {
            v[k] = _mm256_loadu_ps(x + i * kQK + 8 * k);
            amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, v[k]));
        }
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        const float max = _mm_cvtss_f32(m);
        const float id = max != 0.0f ? 127.0f / max : 0.0f;
        y[i].d = f32_to_fp16(max / 127.0f);
        const __m256 mul = _mm256_set1_ps(id);
        __m256i q[4];
        for (int k = 0; k < 4; ++k)
            q[k] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[k], mul), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        // Pack 32 int32 to 32 int8 in element order.
        const __m256i p01 = _mm256_packs_epi32(q[0], q[1]);
        const __m256i p23 = _mm256_packs_epi32(q[2], q[3]);
        __m256i p = _mm256_packs_epi16(p01, p23);
        p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs), p);
    }
}

// Bit-identical to quantize_row_q8_k_ref: the first value of the largest magnitude sets the
// scale, quants round half to even.
void quantize_q8_k_avx2(const float* x, void* yv, int64_t n, Q8KScale scale) {
    auto* y = static_cast<BlockQ8_K*>(yv);
    const __m256 sign_mask = _mm256_set1_ps(-0.0f);
    const float numerator = scale == Q8KScale::Upstream ? -127.0f : -128.0f;
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float* v = x + i * kQK_K;
        __m256 amax = _mm256_setzero_ps();
        for (int k = 0; k < kQK_K / 8; ++k) amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, _mm256_loadu_ps(v + 8 * k)));
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        const __m256 largest = _mm256_set1_ps(_mm_cvtss_f32(m));
        float max = 0.0f;
        for (int k = 0; k < kQK_K / 8; ++k) {
            const int hits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(sign_mask, _mm256_loadu_ps(v + 8 * k)), largest, _CMP_EQ_OQ));
            if (hits) {
                max = v[8 * k + std::countr_zero(unsigned(hits))];
                break;
            }
        }
        if (max == 0.0f) {
            std::memset(&y[i], 0, sizeof(BlockQ8_K));
            continue;
        }
        const float iscale = numerator / max;
        const __m256 mul = _mm256_set1_ps(iscale);
        const __m256i top = _mm256_set1_epi32(127);
        for (int k = 0; k < kQK_K / 32; ++k) {
            __m256i q[4];
            for (int j = 0; j < 4; ++j)
                q[j] = _mm256_min_epi32(top, _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(mul, _mm256_loadu_ps(v + 32 * k + 8 * j)),
                                                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
            for (int g = 0; g < 2; ++g) {
                __m256i s = _mm256_add_epi32(q[2 * g], q[2 * g + 1]);
                __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
                h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
                h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
                y[i].bsums[2 * k + g] = int16_t(_mm_cvtsi128_si32(h));
            }
            const __m256i p01 = _mm256_packs_epi32(q[0], q[1]);
            const __m256i p23 = _mm256_packs_epi32(q[2], q[3]);
            __m256i p = _mm256_packs_epi16(p01, p23);
            p = _mm256_permutevar8x32_epi32(p, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[i].qs + 32 * k), p);
        }
        y[i].d = 1.0f / iscale;
    }
}

namespace {

void f32_to_f16(const float* x, uint16_t* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
    for (; i < n; ++i) y[i] = f32_to_fp16(x[i]);
}

void axpy_f16(int64_t n, float a, const uint16_t* x, float* y) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, load_f16(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] += a * half(x[i]);
}

// Eight rows in order, bit for bit eight axpy_f16 calls: 32 outputs (then 8) stay in registers
// while the rows pass, instead of a load and a store per row; the last few outputs take each
// row's own scalar tail.
void axpy8_f16(int64_t n, const float* a, const void* const* xv, float* y) {
    const uint16_t* x[8];
    __m256 va[8];
    for (int r = 0; r < 8; ++r) {
        x[r] = static_cast<const uint16_t*>(xv[r]);
        va[r] = _mm256_set1_ps(a[r]);
    }
    int64_t i = 0;
    const auto columns = [&]<int kVectors>() {
        __m256 acc[kVectors];
        for (int k = 0; k < kVectors; ++k) acc[k] = _mm256_loadu_ps(y + i + 8 * k);
        for (int r = 0; r < 8; ++r)
            for (int k = 0; k < kVectors; ++k) acc[k] = _mm256_fmadd_ps(va[r], load_f16(x[r] + i + 8 * k), acc[k]);
        for (int k = 0; k < kVectors; ++k) _mm256_storeu_ps(y + i + 8 * k, acc[k]);
        i += 8 * kVectors;
    };
    while (i + 32 <= n) columns.template operator()<4>();
    while (i + 8 <= n) columns.template operator()<1>();
    if (i < n)
        for (int r = 0; r < 8; ++r) axpy_f16(n - i, a[r], x[r] + i, y + i);
}

// Each output element gets one fma per row, in row order, as axpy_f16 gives it; 64 outputs at a
// time stay in registers while every row passes, instead of a load and a store per row.
void weighted_sum_f16(int64_t n_rows, const uint16_t* w, const uint16_t* x, size_t stride, int64_t n, float* out) {
    int64_t i = 0;
    const auto columns = [&]<int kVectors>() {
        __m256 acc[kVectors];
        for (int k = 0; k < kVectors; ++k) acc[k] = _mm256_setzero_ps();
        for (int64_t p = 0; p < n_rows; ++p) {
            const __m256 a = _mm256_set1_ps(half(w[p]));
            const uint16_t* row = x + size_t(p) * stride + i;
            for (int k = 0; k < kVectors; ++k) acc[k] = _mm256_fmadd_ps(a, load_f16(row + 8 * k), acc[k]);
        }
        for (int k = 0; k < kVectors; ++k) _mm256_storeu_ps(out + i + 8 * k, acc[k]);
        i += 8 * kVectors;
    };
    while (i + 64 <= n) columns.template operator()<8>();
    while (i + 8 <= n) columns.template operator()<1>();
    for (; i < n; ++i) {
        float y = 0.0f;
        for (int64_t p = 0; p < n_rows; ++p) y += half(w[p]) * half(x[size_t(p) * stride + size_t(i)]);
        out[i] = y;
    }
}

// Eight int8 values at p, as floats.
inline __m256 i8x8_to_f32(__m128i bytes) { return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes)); }

void axpy_q4_0(int64_t n, float a, const void* xv, float* y) {
    auto* x = static_cast<const BlockQ4_0*>(xv);
    for (int64_t b = 0; b < n / kQK; ++b) {
        const __m256 d = _mm256_set1_ps(a * half(x[b].d));
        const __m256i q = q4_0_bytes(x[b].qs);  // 32 int8 values in element order
        const __m128i lo = _mm256_castsi256_si128(q), hi = _mm256_extracti128_si256(q, 1);
        const __m128i parts[4] = {lo, _mm_srli_si128(lo, 8), hi, _mm_srli_si128(hi, 8)};
        float* yb = y + b * kQK;
        for (int k = 0; k < 4; ++k)
            _mm256_storeu_ps(yb + 8 * k, _mm256_fmadd_ps(d, i8x8_to_f32(parts[k]), _mm256_loadu_ps(yb + 8 * k)));
    }
}

// Eight bytes of a Q4_0 block's nibbles, one to a 32-bit lane: the low nibbles are the block's
// values 8h.. (h the half), the high nibbles 16 + 8h... A byte shuffle spreads them, so no sign
// extension (and its cross-lane move) is needed per eight values.
inline __m256i q4_0_spread(const BlockQ4_0& block, int half_block) {
    const __m256i spread = _mm256_setr_epi8(0, -1, -1, -1, 1, -1, -1, -1, 2, -1, -1, -1, 3, -1, -1, -1,  //
                                            4, -1, -1, -1, 5, -1, -1, -1, 6, -1, -1, -1, 7, -1, -1, -1);
    int64_t eight_bytes;
    std::memcpy(&eight_bytes, block.qs + 8 * half_block, sizeof eight_bytes);
    return _mm256_shuffle_epi8(_mm256_set1_epi64x(eight_bytes), spread);
}

// Values 8k.. of a block (k < 4) as floats, the nibble minus 8.
inline __m256 q4_0_eight(const BlockQ4_0& block, int k) {
    const __m256i bytes = q4_0_spread(block, k % 2);
    const __m256i q = k < 2 ? _mm256_and_si256(bytes, _mm256_set1_epi32(0x0F)) : _mm256_srli_epi32(bytes, 4);
    return _mm256_cvtepi32_ps(_mm256_sub_epi32(q, _mm256_set1_epi32(8)));
}

// Values 8k.. of a Q8_0 block (k < 4) as floats.
inline __m256 q8_0_eight(const BlockQ8_0& block, int k) {
    return i8x8_to_f32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(block.qs + 8 * k)));
}

inline __m256 block_eight(const BlockQ4_0& block, int k) { return q4_0_eight(block, k); }
inline __m256 block_eight(const BlockQ8_0& block, int k) { return q8_0_eight(block, k); }

// Eight rows in order, a block's 32 outputs held in registers while the rows pass: bit for bit
// eight axpy_q4_0 (axpy_q8_0) calls. The rows' block scales are converted eight at a time and
// broadcast from memory.
template <typename Block>
void axpy8(int64_t n, const float* a, const void* const* xv, float* y) {
    const Block* x[8];
    for (int r = 0; r < 8; ++r) x[r] = static_cast<const Block*>(xv[r]);
    const __m256 va = _mm256_loadu_ps(a);
    alignas(16) uint16_t scales[8];
    alignas(32) float d[8];
    for (int64_t b = 0; b < n / kQK; ++b) {
        for (int r = 0; r < 8; ++r) scales[r] = x[r][b].d;
        _mm256_store_ps(d, _mm256_mul_ps(va, _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(scales)))));
        ember::compiler_barrier();  // each row's scale is broadcast from memory, not moved across lanes
        float* yb = y + b * kQK;
        __m256 acc[4];
        for (int k = 0; k < 4; ++k) acc[k] = _mm256_loadu_ps(yb + 8 * k);
        for (int r = 0; r < 8; ++r) {
            const __m256 dr = _mm256_broadcast_ss(d + r);
            for (int k = 0; k < 4; ++k) acc[k] = _mm256_fmadd_ps(dr, block_eight(x[r][b], k), acc[k]);
        }
        for (int k = 0; k < 4; ++k) _mm256_storeu_ps(yb + 8 * k, acc[k]);
    }
}

// Up to eight tokens' sums of the same Q4_0 (Q8_0) rows (KernelTable::axpy_tokens_q4_0): eight
// outputs at a time, each token's sum in a register while every row passes, a row's eight values
// unpacked once for all the tokens. A row's coefficients times its block scale are one vector
// product, broadcast from memory token by token.
template <typename Block, int M>
void axpy_tokens_m(int64_t n, const uint8_t* base, size_t row_bytes, const int32_t* ids, int64_t n_ids, const float* c,
                   float* const* y) {
    const __m256i first_m = _mm256_cmpgt_epi32(_mm256_set1_epi32(M), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    alignas(32) float coef[8];
    for (int64_t b = 0; b < n / kQK; ++b) {
        for (int k = 0; k < 4; ++k) {
            __m256 acc[M];
            for (int t = 0; t < M; ++t) acc[t] = _mm256_setzero_ps();
            for (int64_t j = 0; j < n_ids; ++j) {
                const Block& block = reinterpret_cast<const Block*>(base + size_t(ids[j]) * row_bytes)[b];
                const __m256 row_c = _mm256_maskload_ps(c + size_t(ids[j]) * M, first_m);
                _mm256_store_ps(coef, _mm256_mul_ps(row_c, _mm256_set1_ps(half(block.d))));
                ember::compiler_barrier();
                const __m256 q = block_eight(block, k);
                for (int t = 0; t < M; ++t) acc[t] = _mm256_fmadd_ps(_mm256_broadcast_ss(coef + t), q, acc[t]);
            }
            for (int t = 0; t < M; ++t) {
                float* out = y[t] + b * kQK + 8 * k;
                _mm256_storeu_ps(out, _mm256_add_ps(_mm256_loadu_ps(out), acc[t]));
            }
        }
    }
}

template <typename Block>
void axpy_tokens(int64_t n, const uint8_t* base, size_t row_bytes, const int32_t* ids, int64_t n_ids, const float* c, int m,
                 float* const* y) {
    switch (m) {
        case 1: return axpy_tokens_m<Block, 1>(n, base, row_bytes, ids, n_ids, c, y);
        case 2: return axpy_tokens_m<Block, 2>(n, base, row_bytes, ids, n_ids, c, y);
        case 3: return axpy_tokens_m<Block, 3>(n, base, row_bytes, ids, n_ids, c, y);
        case 4: return axpy_tokens_m<Block, 4>(n, base, row_bytes, ids, n_ids, c, y);
        case 5: return axpy_tokens_m<Block, 5>(n, base, row_bytes, ids, n_ids, c, y);
        case 6: return axpy_tokens_m<Block, 6>(n, base, row_bytes, ids, n_ids, c, y);
        case 7: return axpy_tokens_m<Block, 7>(n, base, row_bytes, ids, n_ids, c, y);
        default: return axpy_tokens_m<Block, 8>(n, base, row_bytes, ids, n_ids, c, y);
    }
}

void axpy_q8_0(int64_t n, float a, const void* xv, float* y) {
    auto* x = static_cast<const BlockQ8_0*>(xv);
    for (int64_t b = 0; b < n / kQK; ++b) {
        const __m256 d = _mm256_set1_ps(a * half(x[b].d));
        float* yb = y + b * kQK;
        for (int k = 0; k < 4; ++k) {
            const __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x[b].qs + 8 * k));
            _mm256_storeu_ps(yb + 8 * k, _mm256_fmadd_ps(d, i8x8_to_f32(bytes), _mm256_loadu_ps(yb + 8 * k)));
        }
    }
}

void f16_to_f32(const uint16_t* x, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, load_f16(x + i));
    for (; i < n; ++i) y[i] = half(x[i]);
}

size_t q8_activation_bytes(int64_t n) { return avx2_q8_extras_offset(n) + size_t(n / kQK) * 8; }

void prepare_q8_activation(const float* x, void* out, int64_t n) {
    quantize_q8_0_avx2(x, out, n);
    const auto* blocks = static_cast<const BlockQ8_0*>(out);
    const int64_t n_blocks = n / kQK;
    auto* d = reinterpret_cast<float*>(static_cast<uint8_t*>(out) + avx2_q8_extras_offset(n));
    auto* offset = reinterpret_cast<int32_t*>(d + n_blocks);
    for (int64_t i = 0; i < n_blocks; ++i) {
        int sum = 0;
        for (int8_t q : blocks[i].qs) sum += q;
        d[i] = half(blocks[i].d);
        offset[i] = -8 * sum;
    }
}

}  // namespace

size_t avx2_q8_extras_offset(int64_t n) { return (size_t(n / kQK) * sizeof(BlockQ8_0) + 63) / 64 * 64; }

const KernelTable& avx2_kernels() {
    // Types without an AVX2 twin keep the scalar kernels.
    static const KernelTable table = [] {
        KernelTable t = reference_kernels();
        t.isa = "avx2";
        t.dot_f32 = dot_f32;
        t.dot_f16 = dot_f16;
        t.dot_bf16 = dot_bf16;
        t.dot_q4_0_q8_0 = dot_q4_0_q8_0;
        t.dot_q8_0_q8_0 = dot_q8_0_q8_0;
        t.dot4_q4_0_q8_0 = dot4_by_rows<dot_q4_0_q8_0>;
        t.q8_activation_bytes = q8_activation_bytes;
        t.prepare_q8_activation = prepare_q8_activation;
        t.f32_to_f16 = f32_to_f16;
        t.quantize_q8_k = quantize_q8_k_avx2;
        t.axpy_f16 = axpy_f16;
        t.axpy_q4_0 = axpy_q4_0;
        t.axpy_q8_0 = axpy_q8_0;
        t.axpy8_q4_0 = axpy8<BlockQ4_0>;
        t.axpy8_q8_0 = axpy8<BlockQ8_0>;
        t.axpy8_f16 = axpy8_f16;
        t.axpy_tokens_q4_0 = axpy_tokens<BlockQ4_0>;
        t.axpy_tokens_q8_0 = axpy_tokens<BlockQ8_0>;
        t.axpy_q4_k = axpy_q4_k_avx2;
        t.axpy_q5_k = axpy_q5_k_avx2;
        t.axpy_q6_k = axpy_q6_k_avx2;
        t.f16_to_f32 = f16_to_f32;
        t.weighted_sum_f16 = weighted_sum_f16;
        t.dot_q4_1_q8_0 = dot_q4_1_q8_0_avx2;
        t.dot_q5_0_q8_0 = dot_q5_0_q8_0_avx2;
        t.dot_q5_1_q8_0 = dot_q5_1_q8_0_avx2;
        t.dot_iq4_nl_q8_0 = dot_iq4_nl_q8_0_avx2;
        t.dot_q2_k_q8_k = dot_q2_k_q8_k_avx2;
        t.dot_q3_k_q8_k = dot_q3_k_q8_k_avx2;
        t.dot_iq4_xs_q8_k = dot_iq4_xs_q8_k_avx2;
        t.dot_q4_1_q8_0_x4 = dot_q4_1_q8_0_x4_avx2;
        t.dot_q5_0_q8_0_x4 = dot_q5_0_q8_0_x4_avx2;
        t.dot_q5_1_q8_0_x4 = dot_q5_1_q8_0_x4_avx2;
        t.dot_iq4_nl_q8_0_x4 = dot_iq4_nl_q8_0_x4_avx2;
        t.dot_q2_k_q8_k_x4 = dot_q2_k_q8_k_x4_avx2;
        t.dot_q3_k_q8_k_x4 = dot_q3_k_q8_k_x4_avx2;
        t.dot_iq4_xs_q8_k_x4 = dot_iq4_xs_q8_k_x4_avx2;
        t.dot_q4_k_q8_k = dot_q4_k_q8_k_avx2;
        t.dot_q5_k_q8_k = dot_q5_k_q8_k_avx2;
        t.dot_q6_k_q8_k = dot_q6_k_q8_k_avx2;
        t.dot_q4_k_q8_k_x4 = dot_q4_k_q8_k_x4_avx2;
        t.dot_q5_k_q8_k_x4 = dot_q5_k_q8_k_x4_avx2;
        t.dot_q6_k_q8_k_x4 = dot_tokens4_by_calls<dot_q6_k_q8_k_avx2>;
        t.group_q4_0 = true;
        t.gemm_q4_0_r8_q8_0 = gemm_q4_0_r8_q8_0_avx2;
        t.gemv4_q4_0_r8_q8_0 = gemv4_q4_0_r8_q8_0_avx2;
        t.group_q8_0 = true;
        t.gemm_q8_0_r8_q8_0 = gemm_q8_0_r8_q8_0_avx2;
        t.gemv4_q8_0_r8_q8_0 = gemv4_q8_0_r8_q8_0_avx2;
        t.group_q4_k = true;
        t.gemm_q4_k_r8_q8_k = gemm_q4_k_r8_q8_k_avx2;
        t.group_q5_k = true;
        t.group_q6_k = true;
        t.gemm_q5_k_r8_q8_k = gemm_q5_k_r8_q8_k_avx2;
        t.gemm_q6_k_r8_q8_k = gemm_q6_k_r8_q8_k_avx2;
        t.gemv4_q4_k_r8_q8_k = gemv4_q4_k_r8_q8_k_avx2;
        t.gemv4_q5_k_r8_q8_k = gemv4_q5_k_r8_q8_k_avx2;
        t.gemv4_q6_k_r8_q8_k = gemv4_q6_k_r8_q8_k_avx2;
        return t;
    }();
    return table;
}

}  // namespace ember::tensor

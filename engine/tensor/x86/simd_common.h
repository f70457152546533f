#pragma once
// Small helpers every x86 kernel file uses. Internal to each file that includes them (an
// unnamed namespace): the files are compiled for different ISAs, and one shared out-of-line copy,
// picked by the linker from an AVX-512 file, would run on a CPU with AVX2 only.
#include <immintrin.h>

#include <cstdint>

namespace ember::tensor {
namespace {

inline float half(uint16_t h) { return _cvtsh_ss(h); }

inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }

// The sum of eight floats: the halves, then pairs, then the last two.
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

}  // namespace
}  // namespace ember::tensor

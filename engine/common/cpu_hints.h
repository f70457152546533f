#pragma once
// Hints spelled for each compiler: fetch a cache line before it is needed; pause inside a spin
// loop (so the sibling hyperthread runs and the loop leaves it cheaply); and, to the compiler,
// keep values stored before this point in memory, to be loaded again after it.

#if defined(_MSC_VER)
#include <intrin.h>
#endif

namespace ember {

inline void prefetch(const void* p) {
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    _mm_prefetch(static_cast<const char*>(p), _MM_HINT_T0);
#elif defined(_MSC_VER) && defined(_M_ARM64)
    __prefetch(p);
#elif defined(__GNUC__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

inline void cpu_relax() {
#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
    _mm_pause();
#elif defined(_MSC_VER) && defined(_M_ARM64)
    __yield();
#elif defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#elif defined(__GNUC__) && defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

inline void compiler_barrier() {
#if defined(_MSC_VER)
    _ReadWriteBarrier();
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

}  // namespace ember

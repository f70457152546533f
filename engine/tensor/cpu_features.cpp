#include "tensor/cpu_features.h"

#include <cstdint>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(_MSC_VER) && (defined(_M_X64) || defined(_M_IX86))
#include <immintrin.h>
#include <intrin.h>
#define EMBER_CPUID 1
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#define EMBER_CPUID 1
#endif

namespace ember::tensor {

#if defined(EMBER_CPUID)
namespace {

struct Registers {
    uint32_t eax, ebx, ecx, edx;
};

Registers cpuid(uint32_t leaf, uint32_t subleaf) {
#if defined(_MSC_VER)
    int r[4];
    __cpuidex(r, int(leaf), int(subleaf));
    return {uint32_t(r[0]), uint32_t(r[1]), uint32_t(r[2]), uint32_t(r[3])};
#else
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid_count(leaf, subleaf, a, b, c, d);
    return {a, b, c, d};
#endif
}

// XCR0: which register files the OS saves. Read only when CPUID says XGETBV exists (OSXSAVE).
uint64_t xcr0() {
#if defined(_MSC_VER)
    return _xgetbv(0);
#else
    uint32_t lo = 0, hi = 0;
    __asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (uint64_t(hi) << 32) | lo;
#endif
}

bool bit(uint32_t reg, int n) { return ((reg >> n) & 1u) != 0; }

}  // namespace

X86Features x86_features() {
    X86Features f;
    const uint32_t max_leaf = cpuid(0, 0).eax;
    if (max_leaf < 1) return f;
    const Registers l1 = cpuid(1, 0);
    if (!bit(l1.ecx, 27) || !bit(l1.ecx, 28)) return f;  // no OSXSAVE or no AVX
    const uint64_t saved = xcr0();
    const bool ymm = (saved & 0x6) == 0x6;    // SSE and AVX state
    const bool zmm = (saved & 0xe0) == 0xe0;  // opmask, upper ZMM halves, ZMM16-31
    if (!ymm) return f;
    f.fma = bit(l1.ecx, 12);
    f.f16c = bit(l1.ecx, 29);
    if (max_leaf < 7) return f;
    const Registers l7 = cpuid(7, 0);
    f.avx2 = bit(l7.ebx, 5);
    if (!zmm) return f;
    f.avx512f = bit(l7.ebx, 16);
    f.avx512bw = bit(l7.ebx, 30);
    f.avx512vl = bit(l7.ebx, 31);
    f.avx512vbmi = bit(l7.ecx, 1);
    f.avx512vnni = bit(l7.ecx, 11);
    const bool tiles = (saved & 0x60000) == 0x60000;  // tile configuration and tile data
    f.amx_tile = tiles && bit(l7.edx, 24);
    f.amx_int8 = tiles && bit(l7.edx, 25);
    return f;
}
#else
X86Features x86_features() { return {}; }
#endif

bool amx_permitted() {
#if defined(__linux__) && defined(__x86_64__)
    static const bool permitted = [] {
        constexpr long kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
        constexpr long kTileData = 18;               // XFEATURE_XTILEDATA
        return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
    }();
    return permitted;
#else
    return false;
#endif
}

}  // namespace ember::tensor

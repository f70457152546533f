#include <cstddef>
#include <vector>

#include "tensor/kernels.h"
#if defined(EMBER_X86)
#include <cpuid.h>

#include "tensor/x86/kernels_x86.h"
#endif

namespace ember::tensor {
namespace {

#if defined(EMBER_X86)
// CPUID leaf 1, ECX bit 29; asked directly because clang (before 16) has no "f16c" for
// __builtin_cpu_supports.
bool has_f16c() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}
#endif

std::vector<const KernelTable*> detect() {
    std::vector<const KernelTable*> tables{&reference_kernels()};
#if defined(EMBER_X86)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c())
        tables.push_back(&avx2_kernels());
    if (tables.size() == 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") &&
        __builtin_cpu_supports("avx512vbmi"))
        tables.push_back(&avx512_kernels());
#endif
    return tables;
}

const std::vector<const KernelTable*>& tables() {
    static const std::vector<const KernelTable*> t = detect();
    return t;
}

}  // namespace

const KernelTable& kernels() { return *tables().back(); }
int available_kernel_count() { return int(tables().size()); }
const KernelTable& available_kernels(int index) { return *tables()[std::size_t(index)]; }

}  // namespace ember::tensor

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tensor/cpu_features.h"
#include "tensor/kernels.h"
#if defined(EMBER_X86)
#include "tensor/x86/kernels_x86.h"
#endif

namespace ember::tensor {
namespace {

std::vector<const KernelTable*> detect() {
    std::vector<const KernelTable*> tables{&reference_kernels()};
#if defined(EMBER_X86)
    const X86Features cpu = x86_features();
    if (cpu.avx2 && cpu.fma && cpu.f16c) tables.push_back(&avx2_kernels());
    if (tables.size() == 2 && cpu.avx512f && cpu.avx512bw && cpu.avx512vl && cpu.avx512vnni && cpu.avx512vbmi)
        tables.push_back(&avx512_kernels());
#if defined(EMBER_AMX)
    if (tables.size() == 3 && cpu.amx_tile && cpu.amx_int8 && amx_permitted()) tables.push_back(&amx_kernels());
#endif
#endif
#if defined(__aarch64__) && defined(__ARM_NEON)
    tables.push_back(&neon_kernels());
#endif
    // EMBER_ISA=scalar|avx2|avx512 stops at that table: what a CPU without the later ones runs, for
    // benchmarks on one that has them (BENCHMARKS.md). ember-bench prints the table in use.
    if (const char* cap = std::getenv("EMBER_ISA"))
        while (tables.size() > 1 && std::strcmp(tables.back()->isa, cap) != 0) tables.pop_back();
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

#include <cstddef>
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

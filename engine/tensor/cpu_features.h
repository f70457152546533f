#pragma once
// What the x86 CPU offers and the operating system saves across context switches, read from
// CPUID and XCR0 the same way on every compiler. All false on other CPUs.

namespace ember::tensor {

struct X86Features {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    bool avx512vnni = false;
    bool avx512vbmi = false;
};

X86Features x86_features();

}  // namespace ember::tensor

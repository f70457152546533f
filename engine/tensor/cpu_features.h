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
    bool amx_tile = false;  // the OS saves tile state too
    bool amx_int8 = false;
};

X86Features x86_features();

// Whether this process may use AMX tile registers: Linux hands out the (8 KiB per thread) tile
// state only on request, once per process; the first call asks. False on other systems, where
// Ember does not build its AMX kernels.
bool amx_permitted();

}  // namespace ember::tensor

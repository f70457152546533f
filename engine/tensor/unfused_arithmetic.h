#pragma once
// Included first by a file whose float arithmetic must round every product and sum on its own:
// the quantizers that reproduce llama.cpp's files, whose x86 build never fuses a multiply-add.
// Compilers fuse by default where the CPU can (GCC on ARM, for one), which would change a rare
// scale choice and so a file's bytes from one machine to another. An explicit std::fma is kept.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#pragma once
#include "tensor/kernels.h"

namespace ember::tensor {
const KernelTable& avx2_kernels();
const KernelTable& avx512_kernels();
}

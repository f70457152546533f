// Host code shared by the GPU kernels' library and the host stand-in of them.
#include <string>

#include "backend/cuda/ffn_kernels.h"
#include "common/error.h"

namespace ember::backend::gpu {

size_t activation_bytes(tensor::DType weight, int64_t n) {
    switch (weight) {
        case tensor::DType::F16: return size_t(n) * 2;
        case tensor::DType::Q4_0:
        case tensor::DType::Q8_0: return size_t(n / 32) * 34;
        default:
            fail(std::string(EMBER_GPU_API " device: no activation layout for ") + tensor::dtype_name(weight) + " rows");
    }
}

}  // namespace ember::backend::gpu

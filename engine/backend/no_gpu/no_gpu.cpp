// The GPU entry points of a build configured without EMBER_CUDA or EMBER_HIP.
#include "backend/gpu.h"
#include "common/error.h"

namespace ember {

GpuProbe probe_gpus() {
    GpuProbe p;
    p.reason = "this build of Ember has no GPU backend (configure with -DEMBER_CUDA=ON or -DEMBER_HIP=ON)";
    return p;
}

namespace backend {

std::unique_ptr<Device> make_gpu_device(int, uint64_t) { fail(probe_gpus().reason); }

}  // namespace backend
}  // namespace ember

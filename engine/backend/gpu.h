#pragma once
// A Device on a GPU (engine/backend/cuda/, for CUDA and HIP). Builds without a GPU backend
// answer with the reason (backend/no_gpu/).

#include <cstdint>
#include <memory>

#include "backend/device.h"
#include "ember/gpu.h"

namespace ember::backend {

// The hot neurons on GPU `index`, within budget_bytes. Throws EngineError with the reason when
// that GPU is not usable or the budget exceeds its free memory.
std::unique_ptr<Device> make_gpu_device(int index, uint64_t budget_bytes);

}  // namespace ember::backend

#pragma once

#include <QString>

#include <cstdint>
#include <string>

#include "ember/gpu.h"

namespace ember::app {

// Where a loaded model's hot neurons go, decided from what the GPU probe found and the user's
// "Use the GPU" switch. Without any usable GPU the switch has nothing to turn off: the sim device
// previews a GPU of the budget's size, so the split view and the slider mean something on every
// machine. A GPU the user turned off leaves everything on the CPU, with no preview to mistake
// for it.
struct DeviceChoice {
    std::string device;           // "gpu:N", "cpu" or "sim"
    uint64_t budget_bytes = 0;    // the user's budget, capped at the GPU's free memory
    uint64_t gpu_free_bytes = 0;  // of the GPU in use; 0 without one
    bool gpu_found = false;       // a usable GPU exists, in use or not
    QString no_gpu_reason;        // why no GPU is in use; empty when one is
};

DeviceChoice choose_device(const ember::GpuProbe& probe, bool use_gpu, uint64_t budget_bytes);

}  // namespace ember::app

#pragma once
// The GPUs this build of Ember can use on this machine, and why none when there are none.

#include <cstdint>
#include <string>
#include <vector>

namespace ember {

struct GpuInfo {
    int index = 0;              // the runtime's device number (after CUDA_/HIP_VISIBLE_DEVICES)
    std::string name;           // "NVIDIA GeForce RTX 4090"
    std::string arch;           // "sm_89", "gfx1030"
    uint64_t total_bytes = 0;
    uint64_t free_bytes = 0;
    std::string unusable;       // empty when Ember can run on it; otherwise why not
};

struct GpuProbe {
    std::string api;            // "CUDA 13.0", "HIP 5.2"; empty when this build has no GPU backend
    std::vector<GpuInfo> gpus;
    std::string reason;         // why no GPU is usable, when none is ("no NVIDIA driver is installed", …)

    const GpuInfo* first_usable() const {
        for (const GpuInfo& g : gpus)
            if (g.unusable.empty()) return &g;
        return nullptr;
    }
};

// Asks the GPU runtime; cheap enough for start-up and a settings page.
GpuProbe probe_gpus();

}  // namespace ember

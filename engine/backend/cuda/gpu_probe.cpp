// Discovery of the GPUs the runtime sees, with the reason when none can be used.
#include <string>

#include "backend/cuda/gpu_runtime.h"
#include "backend/gpu.h"
#include "common/error.h"

namespace ember {
namespace backend::gpu {

void check(gpuError_t e, const char* what) {
    if (e != gpuSuccess) fail(std::string(EMBER_GPU_API " error ") + what + ": " + gpuGetErrorString(e));
}

}  // namespace backend::gpu

namespace {

std::string version_text(int v) {
#if defined(EMBER_HIP)
    return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100);  // HIP: major·10⁷ + minor·10⁵ + patch
#else
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
#endif
}

std::string arch_name(const gpuDeviceProp& p) {
#if defined(EMBER_HIP)
    const std::string full = p.gcnArchName;
    return full.substr(0, full.find(':'));  // "gfx90a:sramecc+:xnack-" → "gfx90a"
#else
    return "sm_" + std::to_string(p.major) + std::to_string(p.minor);
#endif
}

// The kernels are built for these; an older GPU would fail at the first launch.
std::string unusable_reason(const gpuDeviceProp& p) {
#if defined(EMBER_HIP)
    (void)p;
    return {};
#else
    if (p.major * 10 + p.minor < 75)
        return "compute capability " + std::to_string(p.major) + "." + std::to_string(p.minor) +
               " is older than the 7.5 this build needs";
    return {};
#endif
}

}  // namespace

GpuProbe probe_gpus() {
    GpuProbe probe;
    int runtime = 0;
    (void)gpuRuntimeGetVersion(&runtime);
    probe.api = std::string(EMBER_GPU_API " ") + version_text(runtime);
    int driver = 0;
    if (gpuDriverGetVersion(&driver) != gpuSuccess || driver == 0) {
        probe.reason = std::string("no ") + (EMBER_GPU_API[0] == 'C' ? "NVIDIA" : "AMD ROCm") + " driver is installed";
        return probe;
    }
    int count = 0;
    const gpuError_t e = gpuGetDeviceCount(&count);
    if (e == gpuErrorInsufficientDriver) {
        probe.reason = "the installed driver (" + version_text(driver) + ") is older than " + probe.api + " needs";
        return probe;
    }
    if (e != gpuSuccess || count == 0) {
        probe.reason = e == gpuSuccess || e == gpuErrorNoDevice ? std::string("the driver reports no GPU")
                                                                 : std::string("the driver failed: ") + gpuGetErrorString(e);
        return probe;
    }
    for (int i = 0; i < count; ++i) {
        GpuInfo info;
        info.index = i;
        gpuDeviceProp p{};
        if (gpuGetDeviceProperties(&p, i) != gpuSuccess) {
            info.name = "GPU " + std::to_string(i);
            info.unusable = "its properties cannot be read";
            probe.gpus.push_back(std::move(info));
            continue;
        }
        info.name = p.name;
        info.arch = arch_name(p);
        info.unusable = unusable_reason(p);
        size_t free_bytes = 0, total_bytes = 0;
        if (gpuSetDevice(i) == gpuSuccess && gpuMemGetInfo(&free_bytes, &total_bytes) == gpuSuccess) {
            info.free_bytes = free_bytes;
            info.total_bytes = total_bytes;
        } else if (info.unusable.empty()) {
            info.unusable = "its memory cannot be queried (is it in use exclusively by another process?)";
        }
        probe.gpus.push_back(std::move(info));
    }
    if (!probe.first_usable()) probe.reason = "no GPU is usable: " + probe.gpus.front().name + ": " + probe.gpus.front().unusable;
    return probe;
}

}  // namespace ember

#include "app/engine/device_choice.h"

#include <QCoreApplication>

#include <algorithm>

namespace ember::app {

DeviceChoice choose_device(const ember::GpuProbe& probe, bool use_gpu, uint64_t budget_bytes) {
    DeviceChoice c;
    c.budget_bytes = budget_bytes;
    const ember::GpuInfo* gpu = probe.first_usable();
    c.gpu_found = gpu != nullptr;
    if (!gpu) {
        c.device = "sim";
        c.no_gpu_reason = QString::fromStdString(probe.reason);
    } else if (!use_gpu) {
        c.device = "cpu";
        c.no_gpu_reason = QCoreApplication::translate("EngineWorker", "turned off by you (Use the GPU)");
    } else {
        c.device = "gpu:" + std::to_string(gpu->index);
        c.budget_bytes = std::min(budget_bytes, gpu->free_bytes);
        c.gpu_free_bytes = gpu->free_bytes;
    }
    return c;
}

}  // namespace ember::app

#pragma once
// --device and --vram-budget, shared by ember-cli and ember-bench, and --list-gpus's report.

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "ember/gpu.h"
#include "tools/arg_parse.h"

namespace ember::tools {

// --vram-budget: GiB ("3.5") or a share of the model's weight bytes ("25%").
struct BudgetArg {
    double value = 0;
    bool percent = false;
};

inline BudgetArg parse_budget(const std::string& flag, std::string v) {
    BudgetArg b;
    if (!v.empty() && v.back() == '%') {
        b.percent = true;
        v.pop_back();
    }
    b.value = parse_float(flag, v);
    if (b.value < 0) throw UsageError(flag + ": must not be negative");
    return b;
}

// The budget in bytes for `device`. A GPU without --vram-budget gets all of its free memory,
// as PowerInfer does; the sim device needs one.
inline uint64_t budget_bytes(const std::string& device, const std::optional<BudgetArg>& arg, uint64_t model_bytes) {
    if (arg) return arg->percent ? uint64_t(double(model_bytes) * arg->value / 100.0) : uint64_t(arg->value * double(1ull << 30));
    if (device == "sim") throw UsageError("--device sim needs --vram-budget GIB (or a share: 50%)");
    if (device == "gpu" || device.rfind("gpu:", 0) == 0) {
        const GpuProbe probe = probe_gpus();
        const int index = device == "gpu" ? (probe.first_usable() ? probe.first_usable()->index : -1)
                                          : int(parse_int("--device", device.substr(4), 0, 1000));
        for (const GpuInfo& g : probe.gpus)
            if (g.index == index) return g.free_bytes;
        throw UsageError("--device " + device + ": no such GPU" + (probe.reason.empty() ? "" : " (" + probe.reason + ")"));
    }
    return 0;
}

inline void print_gpus(std::FILE* out) {
    const GpuProbe probe = probe_gpus();
    std::fprintf(out, "%s\n", probe.api.empty() ? "no GPU backend in this build" : probe.api.c_str());
    for (const GpuInfo& g : probe.gpus)
        std::fprintf(out, "gpu:%d  %s (%s), %.2f of %.2f GiB free%s%s\n", g.index, g.name.c_str(), g.arch.c_str(),
                     double(g.free_bytes) / double(1ull << 30), double(g.total_bytes) / double(1ull << 30),
                     g.unusable.empty() ? "" : ": not usable: ", g.unusable.c_str());
    if (!probe.reason.empty()) std::fprintf(out, "no usable GPU: %s\n", probe.reason.c_str());
}

}  // namespace ember::tools

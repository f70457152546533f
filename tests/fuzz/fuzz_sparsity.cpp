// Activation-sparsity calibration reader (docs/FORMATS.md §9): a `.sparsity.gguf` beside a model
// is read only when its layers, neurons, ladder and model size fit the model; anything else is
// EngineError. What it returns is what a load then uses: each allocation's per-layer levels (one
// per layer, within the ladder), the thresholds and costs at those levels, and firing frequencies
// with one entry per neuron, which a device plan indexes by neuron.
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/error.h"
#include "fuzz_support.h"
#include "sparse/layer_allocation.h"
#include "sparse/sparsity_file.h"

namespace {
// The model the seeds (tests/fuzz/corpus/sparsity, tests/fuzz/make_corpus.py) were calibrated for:
// ember-synth-model --type F16 --n-layer 2 --n-embd 64 --n-head 2 --n-ff 64 --n-vocab 512.
constexpr int32_t kLayers = 2;
constexpr int32_t kNeurons = 64;
constexpr uint64_t kModelBytes = 260544;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace ember::sparse;
    using ember::SparsityAllocation;
    const ember::fuzz::MemoryFile input(data, size, "fuzz.sparsity.gguf");
    try {
        const SparsityCalibration c = read_sparsity_file(input.path(), kLayers, kNeurons, kModelBytes);
        const float top = c.levels.back();
        const float suggested = recommended_level(c);
        if (!(suggested >= 0.0f && suggested <= top)) ember::fuzz::fail("suggested level outside the ladder");
        for (SparsityAllocation allocation : {SparsityAllocation::Uniform, SparsityAllocation::Greedy, SparsityAllocation::Measured}) {
            if (allocation == SparsityAllocation::Measured && c.cost_levels.empty()) continue;
            for (float level : {0.0f, 0.25f * top, 0.5f * top, top}) {
                const std::vector<float> levels = layer_levels(c, level, allocation);
                if (levels.size() != size_t(kLayers)) ember::fuzz::fail("a level per layer");
                for (int32_t il = 0; il < kLayers; ++il) {
                    const float s = levels[size_t(il)];
                    if (!(s >= 0.0f && s <= top)) ember::fuzz::fail("a layer's level outside the ladder");
                    for (int site = 0; site < kSparsitySites; ++site)
                        if (std::isnan(threshold_at(c, il, SparsitySite(site), s))) ember::fuzz::fail("NaN threshold");
                    if (firing_at(c, il, s).size() != size_t(kNeurons)) ember::fuzz::fail("a firing frequency per neuron");
                    if (!c.cost_levels.empty()) (void)layer_cost_at(c, il, s);
                }
            }
        }
    } catch (const ember::EngineError&) {
    }
    return 0;
}

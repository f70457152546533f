// Routing-profile reader (docs/FORMATS.md §10): a `.experts.gguf` beside a mixture of experts is
// read only when its layers, experts and model size fit the model; anything else is EngineError.
// What it returns is what a device plan indexes: a share per expert in every layer, and firing
// frequencies, where present, for every neuron of every expert.
#include <cstdint>

#include "common/error.h"
#include "fuzz_support.h"
#include "sparse/expert_profile.h"

namespace {
// The models the seeds (tests/fuzz/corpus/expert_profile, tests/fuzz/make_corpus.py) were profiled
// for: ember-synth-model --type F16 --experts 4 --experts-used 2 --n-layer 2 --n-embd 64 --n-head 2
// --n-ff 32 --n-vocab 512, as SmallThinker (its experts' neurons profiled too) and as Mixtral.
constexpr int32_t kLayers = 2, kExperts = 4, kExpertsUsed = 2, kNeurons = 32;
constexpr uint64_t kModelBytes[] = {312192, 312064};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace ember::sparse;
    const ember::fuzz::MemoryFile input(data, size, "fuzz.experts.gguf");
    for (uint64_t model_bytes : kModelBytes) {
        try {
            const ExpertProfile p = read_expert_profile(input.path(), kLayers, kExperts, kExpertsUsed, kNeurons, model_bytes);
            if (p.share.size() != size_t(kLayers)) ember::fuzz::fail("a share row per layer");
            for (const auto& layer : p.share)
                if (layer.size() != size_t(kExperts)) ember::fuzz::fail("a share per expert");
            if (!p.fire.empty()) {
                if (p.fire.size() != size_t(kLayers)) ember::fuzz::fail("a firing row per layer");
                for (const auto& layer : p.fire)
                    if (layer.size() != size_t(kExperts) * size_t(kNeurons)) ember::fuzz::fail("a frequency per neuron");
            }
        } catch (const ember::EngineError&) {
        }
    }
    return 0;
}

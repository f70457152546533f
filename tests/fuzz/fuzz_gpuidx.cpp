// .gpuidx reader: PowerInfer's placement cache is read back only when every layer's index and
// bucket tensors are present, shaped for the model, in range; anything else is EngineError.
#include <cstdint>

#include "common/error.h"
#include "fuzz_support.h"
#include "sparse/gpu_index.h"

namespace {
// The shape of the seed files (tests/fuzz/corpus/gpuidx), made for a 2-layer model with 64 neurons.
constexpr int32_t kLayers = 2;
constexpr int64_t kNeurons = 64;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const ember::fuzz::MemoryFile input(data, size, "fuzz.gpuidx");
    try {
        const auto index = ember::sparse::read_gpu_index(input.path(), kLayers, kNeurons);
        (void)index;
    } catch (const ember::EngineError&) {
    }
    return 0;
}

// PyTorch .pt reader (zip directory + pickle VM): a vector of finite-or-not doubles or EngineError;
// no pickle GLOBAL outside the torch rebuild functions may run, no read outside the input.
#include <cstdint>
#include <span>

#include "common/error.h"
#include "sparse/activation_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto values = ember::sparse::parse_torch_vector(std::span<const uint8_t>(data, size), "fuzz.pt");
        volatile double sum = 0;
        for (double v : values) sum = sum + v;
    } catch (const ember::EngineError&) {
    }
    return 0;
}

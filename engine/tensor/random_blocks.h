#pragma once
// Random, well-formed rows of any weight type: random quants with block scales set so that the
// values have about the requested standard deviation and mean near zero. For synthetic models
// (ember-synth-model) and kernel tests; the layouts need no quantizer to be exercised.

#include <cstdint>
#include <random>

#include "tensor/dtype.h"

namespace ember::tensor {

// Writes row_bytes(t, n) bytes of one row; n a multiple of block_size(t).
void random_row(DType t, int64_t n, float sd, std::mt19937_64& rng, uint8_t* out);

}  // namespace ember::tensor

#pragma once
// How a model-wide activation-sparsity level is shared among a dense model's layers. Uniform:
// every layer skips that share of its FFN neurons. Greedy: the shares average to the level, and
// each step of the allocation goes to the layer whose skipped neurons would carry the least of
// its |act(gate)| energy (MagnitudeHistogram::energy_below), so layers whose activations are
// concentrated in few neurons skip more. Measured: the same steps, each to the layer whose
// measured cost (the model's KL divergence from dense with that layer alone sparse) rises least.
// BENCHMARKS.md measures them against each other.

#include <cstdint>
#include <vector>

#include "ember/model.h"
#include "sparse/sparsity_file.h"

namespace ember::sparse {

// Each layer's share of skipped FFN neurons for the model-wide `level` in [0, 1): their mean is
// the level, and none exceeds the calibration ladder's top level.
std::vector<float> layer_levels(const SparsityCalibration& c, float level, SparsityAllocation allocation);

}  // namespace ember::sparse

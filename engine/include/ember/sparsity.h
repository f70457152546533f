#pragma once
// What activation sparsity costs a dense model, as ember-calibrate measured it: the calibration
// file's perplexity at each level against the dense model's, for choosing
// ModelParams::activation_sparsity by its measured cost.

#include <cstdint>
#include <string>
#include <vector>

#include "ember/model.h"
#include "ember/result.h"

namespace ember {

struct SparsityLevelCost {
    float level = 0.0f;     // share of FFN neurons skipped
    float ppl = 0.0f;       // perplexity on the calibration text's held-out tail
    float same_top = 0.0f;  // share of positions whose most likely token is the dense model's
    // Tokens generated per second as a multiple of the dense model's, on the CPU that calibrated;
    // 0 when not measured.
    float speed = 0.0f;
};

struct SparsityCalibrationInfo {
    std::string path;
    float ppl_dense = 0.0f;
    uint64_t n_scored = 0;
    std::vector<SparsityLevelCost> levels;  // empty when the cost was not measured
    // The largest level within 1 % of the dense perplexity that (where measured) generates faster
    // than the dense model; 0: none.
    float recommended = 0.0f;
};

// Where ModelParams::sparsity_file defaults to for the model at `model_path`: beside it, named
// for it (model.gguf: model.sparsity.gguf), as ember-calibrate writes it.
std::string sparsity_calibration_path(const std::string& model_path);

// The calibration for `model` at `path` (empty: beside the model file, as ModelParams'
// sparsity_file), checked against the model; an Error names the file when there is none or it
// does not fit.
Result<SparsityCalibrationInfo> read_sparsity_calibration(const Model& model, const std::string& path = {});

}  // namespace ember

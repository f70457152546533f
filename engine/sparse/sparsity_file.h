#pragma once
// A dense model's activation-sparsity calibration (docs/FORMATS.md §9), written by
// ember-calibrate as `<model>.sparsity.gguf`: for each layer and each input of its linear layers
// (the attention's input, the attention output's input, the FFN's input, and the FFN's
// intermediate |act(gate)|), a magnitude histogram and the magnitude below which each level of a
// ladder of shares lies; for the FFN's intermediate also each neuron's firing frequency at every
// level, from which a device plan picks hot neurons. Errors throw EngineError naming the file and
// the key or tensor.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ember/model.h"
#include "sparse/magnitude_histogram.h"

namespace ember::sparse {

// What a threshold applies to.
enum class SparsitySite : uint8_t { AttnIn, AttnOut, FfnIn, FfnAct };
constexpr int kSparsitySites = 4;
const char* sparsity_site_name(SparsitySite site);  // "attn_in", "attn_out", "ffn_in", "ffn_act"

struct SparsityCalibration {
    uint64_t model_bytes = 0;   // the calibrated model file's size: a calibration fits that file only
    uint64_t n_tokens = 0;      // tokens of calibration text
    std::string activation;     // the FFN activation calibrated: "silu" or "relu"
    std::vector<float> levels;  // the ladder of shares, ascending in (0, 1)
    // How a level is spread over the layers when the model is loaded without saying
    // (ModelParams::sparsity_allocation), and what `quality` was measured with. Files written
    // before the key existed were measured uniform.
    SparsityAllocation allocation = SparsityAllocation::Uniform;
    struct Layer {
        std::array<MagnitudeHistogram, kSparsitySites> histograms;
        std::array<std::vector<float>, kSparsitySites> thresholds;  // [levels]
        // [levels][n_ff]: the share of tokens for which the neuron's |act(gate)| exceeded the
        // level's threshold.
        std::vector<std::vector<float>> firing;
        // [cost_levels]: the mean KL divergence of the model's next-token distribution from the
        // dense model's when this layer alone skips each share (empty when not measured).
        std::vector<float> cost;
    };
    std::vector<float> cost_levels;  // ascending in (0, 1); empty: no layer costs were measured
    std::vector<Layer> layers;
    // What each level costs, measured by ember-calibrate on text held out from the calibration
    // (empty when it was not measured): perplexity as llama.cpp computes it, and the share of
    // scored positions whose most likely token is the dense model's. `speed` is what each level
    // gains: tokens generated per second as a multiple of the dense model's, on the CPU and
    // threads that calibrated (empty when not measured).
    struct Quality {
        uint64_t n_scored = 0;
        float ppl_dense = 0.0f;
        std::vector<float> levels, ppl, same_top, speed;
    } quality;
};

// The largest measured level whose perplexity is at most (1 + max_increase) times the dense
// model's and which, where speeds were measured, generates faster than the dense model; 0 when
// none is, or nothing was measured. A level slower than exact is no trade to suggest.
float recommended_level(const SparsityCalibration& c, float max_increase = 0.01f);

// The ladder ember-calibrate writes: 0.05, 0.10, ..., 0.95.
std::vector<float> default_sparsity_levels();

// The threshold of `site` in layer il for a share s in [0, 1): linear between the ladder's
// levels (and from 0 at s = 0); s above the last level is refused by the caller.
float threshold_at(const SparsityCalibration& c, int32_t il, SparsitySite site, float s);
// Layer il's measured cost (Layer::cost) at a share s in [0, 1): linear between the levels
// measured, from 0 at s = 0, and past the last along the last step's slope. Only for a
// calibration with costs (c.cost_levels not empty).
float layer_cost_at(const SparsityCalibration& c, int32_t il, float s);
// Layer il's neuron firing frequencies at the ladder level nearest s.
const std::vector<float>& firing_at(const SparsityCalibration& c, int32_t il, float s);

// "uniform", "greedy", "measured"; and back (nullopt for anything else).
const char* sparsity_allocation_name(SparsityAllocation a);
std::optional<SparsityAllocation> parse_sparsity_allocation(const std::string& name);

// `<model path without .gguf>.sparsity.gguf`
std::string default_sparsity_path(const std::string& model_path);

void write_sparsity_file(const std::string& path, const SparsityCalibration& c);
// Checks the file against the model it is used with: n_layer layers of n_ff neurons, and a model
// file of model_bytes bytes.
SparsityCalibration read_sparsity_file(const std::string& path, int32_t n_layer, int32_t n_ff, uint64_t model_bytes);

}  // namespace ember::sparse

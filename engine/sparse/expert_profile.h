#pragma once
// A mixture of experts' routing profile (docs/FORMATS.md §10), written by ember-calibrate as
// `<model>.experts.gguf`: for each layer, the share of the calibration text's tokens the router
// sent to each expert, and how often each expert's neurons fired for them. A device plan places
// the experts (or the neurons) a profile says are used most before the session has routed any
// token of its own. Errors throw EngineError naming the file and the key or tensor.

#include <cstdint>
#include <string>
#include <vector>

namespace ember::sparse {

struct ExpertProfile {
    uint64_t model_bytes = 0;  // the profiled model file's size: a profile fits that file only
    uint64_t n_tokens = 0;     // tokens of profiling text
    // [n_layer][n_expert]: tokens routed to the expert over n_tokens; a layer's shares sum to
    // the experts each token uses.
    std::vector<std::vector<float>> share;
    // [n_layer][n_expert · n_ff], optional (empty: the profile has none): of the tokens routed to
    // expert e, the share for which its neuron i (at e·n_ff + i) fired, i.e. was not exactly 0.
    std::vector<std::vector<float>> fire;
};

// `<model path without .gguf>.experts.gguf`
std::string default_expert_profile_path(const std::string& model_path);

void write_expert_profile(const std::string& path, const ExpertProfile& p);
// Checks the file against the model it is used with: n_layer layers of n_expert experts of n_ff
// neurons, each token routed to n_expert_used of them, and a model file of model_bytes bytes.
ExpertProfile read_expert_profile(const std::string& path, int32_t n_layer, int32_t n_expert, int32_t n_expert_used,
                                  int32_t n_ff, uint64_t model_bytes);

}  // namespace ember::sparse

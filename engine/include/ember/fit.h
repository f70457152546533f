#pragma once
// Will a model fit this machine, and how would it be split? Answered from the GGUF header
// alone (metadata and tensor table, the first megabytes of the file), so the Hub browser can
// show it before anything is downloaded. The numbers are the engine's own placement solver
// run on the file's exact tensor sizes.

#include <cstdint>
#include <string>
#include <vector>

#include "ember/result.h"
#include "ember/session.h"

namespace ember {

// What a model file needs, per part, from its tensor table.
struct ModelFootprint {
    std::string architecture;
    bool sparse = false;            // has predictors: hot neurons can go to a GPU
    uint64_t weight_bytes = 0;      // every tensor: what loading reads into memory
    int32_t n_layer = 0;
    int32_t n_ctx_train = 0;
    uint64_t kv_bytes_per_token = 0;      // F16 K and V, all layers
    uint64_t scratch_bytes_per_token = 0;  // compute buffers, per token of a batch
    int32_t head_dim = 0;                  // sizes the compute buffers each worker thread has
    // The widths a GPU's own work depends on (backend::WorkShape).
    int64_t n_embd = 0, n_q = 0, n_gqa = 0, n_ff_per_token = 0, n_vocab = 0;
    int32_t n_head = 0;
    // Device costs: per layer, then the output group. Sparse files place neurons
    // (neuron_bytes), dense ones whole layers (dense_ffn_bytes: gate, up and down).
    std::vector<uint64_t> attn_bytes, predictor_bytes, ffn_norm_bytes, neuron_bytes, dense_ffn_bytes;
    std::vector<int64_t> n_ff;
    // A mixture of experts: experts per layer of expert_ff neurons each and, per layer, all of
    // them together (gate, up and down); they go to a GPU whole, once everything dense fits.
    // Gate-first experts in PowerInfer's transposed layout go neuron by neuron instead:
    // expert_neuron_bytes, per layer, is one neuron's up and down rows (0: whole experts).
    int32_t n_expert = 0;
    int64_t expert_ff = 0;
    std::vector<uint64_t> expert_bytes, expert_neuron_bytes;
    uint64_t output_bytes = 0;
    // Why the engine would refuse this file, in plain words ("architecture gemma3n is not
    // supported"); empty when it can run it. The loader's own checks on the header: the
    // architecture, every weight's type, the tokenizer and its pre-tokenizer.
    std::string cannot_run;
};

// header_path holds the first bytes of a GGUF file of full_size bytes (or the whole file).
Result<ModelFootprint> read_footprint(const std::string& header_path, uint64_t full_size);

struct FitQuery {
    uint64_t vram_budget = 0;  // 0: no GPU in use
    uint64_t ram_bytes = 0;    // memory the model may use on this computer
    int32_t n_ctx = 2048;
    // As SessionParams' defaults: the compute margin a session keeps.
    int32_t n_batch = kDefaultBatch;
    int32_t n_threads = 0;  // 0: every hardware thread
};

enum class FitKind { AllOnGpu, Hybrid, CpuOnly, TooLarge, CannotRun };

struct Fit {
    FitKind kind = FitKind::CpuOnly;
    double neuron_share = 0.0;  // FFN neurons on the GPU (Hybrid: the hottest ones)
    uint64_t ram_needed = 0;    // weights, KV cache and scratch in memory
    std::string text;           // "all on GPU", "hybrid: 40 % of neurons on GPU", "CPU only", "too large …", "can't run yet: …"
};

Fit estimate_fit(const ModelFootprint& footprint, const FitQuery& query);

// What a session with the query's context, batch and threads leaves free on a device for the
// device's own work: a GPU's scratch and norms for this model (backend::device_work_bytes), and
// never less than the session's compute buffers in memory.
uint64_t compute_margin_bytes(const ModelFootprint& footprint, const FitQuery& query);

}  // namespace ember

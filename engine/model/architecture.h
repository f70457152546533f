#pragma once
// One architecture = one file in engine/model/ that declares its tensors and runs its layers
// from the shared blocks. `load_architecture` maps `general.architecture` to that file.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backend/device.h"
#include "ember/model.h"
#include "gguf/gguf_reader.h"
#include "model/executor.h"
#include "model/expert_residency.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/sparse_lm_head.h"
#include "model/tensor_binding.h"
#include "sparse/placement.h"
#include "sparse/sparsity_file.h"

namespace ember::model {

// What an architecture's bound weights weigh, for ModelInfo and the benchmarks.
struct WeightTotals {
    uint64_t weight_bytes = 0;      // every bound tensor
    uint64_t bytes_per_token = 0;   // weights read to evaluate one token densely
    uint64_t n_params = 0;
    uint64_t ffn_bytes = 0;         // FFN matrices, all layers
    uint64_t predictor_bytes = 0;   // predictors, all layers (0 when dense)
    uint64_t attention_by_input_bytes = 0;  // attention's matrices when read by kept input (sparse_attn_input)
    int32_t ffn_matrices = 0;       // per layer: 3 with a gate (gate, up, down), 2 without
    const char* weight_type = "";   // type of the bulk of the weights
};

// A layer's matrices by the part of the plan they belong to.
struct LayerMatrices {
    std::vector<tensor::WeightView> attention;  // Q, K, V and output, or a fused QKV and output
    std::vector<tensor::WeightView> predictor;  // sparse models: fc1, fc2
    std::vector<tensor::WeightView> ffn;        // dense models: gate (if any), up, down
    // A mixture of experts: each expert's gate, up and down, placed expert by expert; none when
    // its down weights are transposed (a device multiplies whole matrices only).
    std::vector<std::vector<tensor::WeightView>> experts;
    uint64_t attn_norm_bytes = 0;               // 0 where it is the FFN's norm too
    uint64_t ffn_norm_bytes = 0;
};

class Architecture {
public:
    virtual ~Architecture() = default;

    const HParams& hparams() const { return hp_; }
    uint64_t weight_bytes() const { return totals_.weight_bytes; }
    uint64_t bytes_per_token() const { return totals_.bytes_per_token; }
    uint64_t ffn_bytes() const { return totals_.ffn_bytes; }
    uint64_t predictor_bytes() const { return totals_.predictor_bytes; }
    uint64_t attention_by_input_bytes() const { return totals_.attention_by_input_bytes; }
    int32_t ffn_matrices() const { return totals_.ffn_matrices; }
    uint64_t n_params() const { return totals_.n_params; }
    const char* weight_type() const { return totals_.weight_type; }

    bool sparse() const { return hp_.sparse(); }
    // A gate-first model (a dense one loaded with activation sparsity): each layer's share of
    // neurons to skip at a model-wide `level` (ModelParams::sparsity_allocation); empty for other
    // models. Any level runs on the same weights.
    std::vector<float> layer_levels(float level) const;
    // At those shares, from the calibration: per layer, each neuron's firing frequency, by which a
    // device plan picks hot neurons as it does from PowerInfer's activation statistics; the
    // |act(gate)| each layer's neurons must exceed; and with HParams::sparse_ffn_input or
    // sparse_attn_input, the magnitudes its FFN's or attention's inputs must exceed (and the
    // neurons an FFN reading by input keeps).
    std::vector<std::vector<double>> calibrated_firing(const std::vector<float>& levels) const;
    std::vector<float> gate_thresholds(const std::vector<float>& levels) const;
    InputSparsity input_sparsity(const std::vector<float>& levels) const;

    // The matrices of each part a placement may put on a device, and their norms' bytes.
    virtual LayerMatrices layer_matrices(int32_t il) const = 0;
    virtual const tensor::WeightView& lm_head() const = 0;
    // The file's predictor of which LM head rows a token needs (SmallThinker's), when the model
    // was loaded to use it (ModelParams::sparse_lm_head).
    virtual const LmHeadProfiler* lm_head_profiler() const { return nullptr; }
    // A mixture of experts kept partly on disk (ModelParams::expert_memory_bytes): which experts
    // are read from the file when routed; null when every expert is in memory.
    virtual const ExpertResidency* expert_residency() const { return nullptr; }
    // One layer's FFN rows, neuron by neuron, for a device: sparse models', and a mixture of
    // gate-first experts' in PowerInfer's layout (model/expert_ffn.h); empty for others.
    virtual backend::FfnRows ffn_rows(int32_t il) const = 0;
    // The exact device byte costs of every part, with a KV cache of n_ctx tokens.
    sparse::PlacementCosts placement_costs(int32_t n_ctx) const;

    // Evaluates n tokens (n <= the scratch's n_batch) at positions kv.n_past().., appends them
    // to the cache and writes logits: of every token ([n][n_vocab]) when logits_all, else of
    // the last one. Every step runs where the executor's plan says.
    virtual void forward(const int32_t* tokens, int32_t n, KvCache& kv, Executor& ex, float* logits,
                         bool logits_all) const = 0;

protected:
    // Each architecture calls this once its tensors are bound. Generating a token reads every
    // weight once except the embedding table, of which it reads one row (unless the LM head is
    // the same table), and the `unread_bytes` it never needs (experts it is not routed to).
    void set_totals(const TensorBinder& bind, const tensor::WeightView& token_embd, const tensor::WeightView& output,
                    uint64_t ffn_bytes, uint64_t predictor_bytes, int32_t ffn_matrices, tensor::DType weight_type,
                    uint64_t unread_bytes = 0, uint64_t attention_by_input_bytes = 0);

    HParams hp_;
    uint64_t output_norm_bytes_ = 0;
    std::optional<sparse::SparsityCalibration> calibration_;  // gate-first models only
    SparsityAllocation sparsity_allocation_ = SparsityAllocation::Uniform;  // how a level is spread over layers

private:
    WeightTotals totals_;
};

// Bytes of one 2-D weight.
inline uint64_t matrix_bytes(const tensor::WeightView& w) { return uint64_t(w.row_bytes) * uint64_t(w.n_rows); }
// Bytes of the F16 K cache (and as many of the V cache) for n_ctx tokens, all layers.
inline uint64_t kv_cache_half_bytes(const HParams& hp, int32_t n_ctx) {
    return uint64_t(hp.n_layer) * uint64_t(n_ctx) * uint64_t(hp.n_embd_gqa()) * 2;
}

// Throws EngineError naming the file and the architecture string when it is unknown.
std::unique_ptr<Architecture> load_architecture(const gguf::File& file, const ModelParams& params);

// Per-architecture constructors, each defined in its own file.
// Whether load_architecture knows `general.architecture` = name.
bool architecture_supported(std::string_view name);

std::unique_ptr<Architecture> load_llama(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_qwen2(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_qwen3(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_qwen3moe(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_phi3(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_gemma2(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_gemma3(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_bamboo(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_falcon(const gguf::File& file, const ModelParams& params);
std::unique_ptr<Architecture> load_smallthinker(const gguf::File& file, const ModelParams& params);

}  // namespace ember::model

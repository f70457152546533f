#pragma once
// Loading a model: Model::load(path, params, progress) -> Model or an Error naming the file,
// tensor or key at fault. A Model is immutable after loading and may be shared by sessions.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/result.h"

namespace ember {

enum class FfnActivation {
    Auto,  // what the file or the architecture says; for dense llama files, hints of a ReLU model, else SiLU
    Silu,  // SwiGLU: SiLU(gate) * up
    Relu,  // ReGLU: ReLU(gate) * up (ReluLLaMA, ProSparse)
};

// How ModelParams::activation_sparsity is shared among the layers: the same share in each;
// more where the skipped activations carry less of the layer's energy (Greedy); or more where
// the calibration measured that the model's output moves least (Measured).
enum class SparsityAllocation : uint8_t { Uniform, Greedy, Measured };

struct ModelParams {
    FfnActivation ffn_activation = FfnActivation::Auto;
    // false (default): read the file into anonymous memory, which the kernel cannot drop
    // under memory pressure, may back with huge pages, and a truncation of the file on disk
    // cannot touch. true: map the file (shares the page cache with other processes, but
    // generation slows to the disk's speed whenever the kernel reclaims the cache).
    bool use_mmap = false;
    // A mixture of experts only: keep everything but the experts in memory, and of the experts
    // those used most (by the routing profile ember-calibrate writes beside the model, else layer
    // by layer) within this many bytes; the others stay in the file, mapped, and are read when a
    // token is routed to them, asked for as soon as the router has chosen. For a model larger
    // than the memory it may use. Unset: everything in memory. Linux and other POSIX systems.
    std::optional<uint64_t> expert_memory_bytes;
    // A mixture of experts stored in upstream llama.cpp's layout whose experts run gate first
    // (SmallThinker's ReGLU experts): lay each expert's down projection out by neuron at load, as
    // PowerInfer's own files store it, so that a device holds single neurons of an expert (the
    // ones that fire most) rather than whole experts, and the CPU reads the down rows of fired
    // neurons only. F32, F16 and Q8_0 downs keep their values exactly; Q4_0 and the other types
    // of at least 4.5 bits a weight are quantized again as Q4_0 along the new rows (a second
    // rounding); smaller types are refused. Needs the file read into memory (not with use_mmap
    // or expert_memory_bytes). Ignored for other models and for files already in PowerInfer's
    // layout.
    bool experts_by_neuron = false;
    // Sparse (PowerInfer) files: predictor score at or above which a neuron is computed.
    // Unset: LLAMA_SPARSE_PRED_THRESHOLD, else the file's powerinfer.sparse_threshold, else 0.
    std::optional<float> sparse_threshold;
    // Dense llama-family models with a gated FFN (SwiGLU, ReGLU): the share of FFN neurons to skip
    // per token, 0 (off, the exact dense model) to 0.95. A neuron is skipped when |act(gate)| is
    // at most its layer's threshold for that share, read from a calibration ember-calibrate wrote.
    float activation_sparsity = 0.0f;
    // How that share is spread over the layers: the same in each, or more where the calibration
    // found the skipped neurons carry the least (engine/sparse/layer_allocation.h). Unset: the
    // calibration's own, the one its measured cost is for.
    std::optional<SparsityAllocation> sparsity_allocation;
    // With activation_sparsity: skip, as well, the FFN inputs whose magnitude is at most their
    // layer's calibrated threshold for the same share (TEAL's input sparsity), so the gate reads
    // the weights of the kept inputs only. The gate is laid out by input at load (F32, F16 and
    // Q8_0 exactly, the other types as Q4_0, a second rounding). Not for files whose gate and up
    // projections are one tensor (Phi 3), nor for models with fewer FFN neurons than inputs.
    bool sparse_ffn_input = false;
    // With activation_sparsity: skip, as well, the inputs of attention's Q, K, V and output
    // products whose magnitude is at most their layer's calibrated threshold for the same share
    // (TEAL's attention inputs). Those four matrices are laid out by input at load (as the gate
    // above), so attention runs on the CPU whatever the device.
    bool sparse_attn_input = false;
    // That calibration; empty: <model without .gguf>.sparsity.gguf beside the model.
    std::string sparsity_file;
    // SmallThinker files from PowerInfer carry lm_head_profiler, a predictor of the LM head rows
    // a token needs: with this set, one token's logits on the CPU are computed for those rows
    // only, and the others are 0, as PowerInfer's runtime does (the LM head then keeps its rows
    // one by one, not grouped). It changes the output (BENCHMARKS.md measures how much), so it is
    // off unless asked; asking on a file without one is an error.
    bool sparse_lm_head = false;
};

// The transformer's dimensions, as the file declares them.
struct ModelShape {
    int32_t n_vocab = 0;
    int32_t n_ctx_train = 0;
    int32_t n_embd = 0;
    int32_t n_layer = 0;
    int32_t n_head = 0;
    int32_t n_head_kv = 0;
    int32_t n_ff = 0;
};

struct ModelInfo : ModelShape {
    std::string path;
    std::string architecture;  // general.architecture
    std::string name;          // general.name, may be empty
    std::string weight_type;   // type of most 2-D weights, e.g. "Q4_0"
    std::string chat_template;  // tokenizer.chat_template (Jinja) when the file has one as a string
    std::string bos_token;      // the BOS and EOS pieces, as chat templates print them ("<s>", "</s>")
    std::string eos_token;
    std::vector<std::string> control_pieces;  // texts tokenize_markup reads as control tokens; see ember/markup.h
    std::string ffn_activation;  // as run: "silu", "relu", or "relu-sym" (ReLU on gate and up, Bamboo)
    std::string ffn_activation_source;  // why: the user, the file, the architecture, or a hint such as activation/
    bool powerinfer_file = false;  // magic PWRI
    bool sparse = false;           // runs the predictor-guided sparse FFN
    float sparse_threshold = 0.0f;
    float activation_sparsity = 0.0f;  // as run: 0 when off
    // A dense model with a gated FFN that ember-calibrate can calibrate for activation sparsity.
    bool activation_sparsity_possible = false;
    std::string sparsity_file;         // the calibration read, when it is on
    uint64_t n_params = 0;
    uint64_t weight_bytes = 0;  // bytes of all tensors
    uint64_t bytes_per_token = 0;  // weight bytes read to generate one token densely (all but the embedding table)
    uint64_t ffn_bytes = 0;        // of which FFN matrices (gate, up, down)
    uint64_t predictor_bytes = 0;  // and sparse predictors (fc1, fc2)
    // and attention's matrices, where a token reads only its kept inputs' rows of them
    // (ModelParams::sparse_attn_input; 0 otherwise)
    uint64_t attention_by_input_bytes = 0;
    int32_t ffn_matrices = 0;      // FFN matrices per layer: 3 with a gate (gate, up, down), 2 without
    int32_t n_expert = 0;          // a mixture of experts: experts per layer (0: one dense FFN)
    int32_t n_expert_used = 0;     // and how many of them each token runs
    // With ModelParams::expert_memory_bytes: the experts' bytes kept in memory, of all of them,
    // and what chose which ("the most used first, by PROFILE", or "layer by layer: " and why);
    // 0 and empty otherwise.
    uint64_t expert_bytes_in_memory = 0, expert_bytes = 0;
    std::string expert_memory_order;
    uint64_t kv_bytes_per_token = 0;  // the F16 K and V caches, all layers, per token of context
};

// Called with the fraction loaded; returning false cancels the load.
using LoadProgress = std::function<bool(float fraction)>;

class Model {
public:
    static Result<std::shared_ptr<Model>> load(const std::string& path, const ModelParams& params = {},
                                               const LoadProgress& progress = {});
    ~Model();

    const ModelInfo& info() const;

    std::vector<int32_t> tokenize(std::string_view text, bool add_bos) const;
    // A prompt a chat template rendered: "<s>", "<|im_start|>" and the other control tokens'
    // texts in it are those tokens (tokenize() keeps them as characters, for user text). Text
    // put into the prompt is kept as text by escape_markup (ember/markup.h).
    std::vector<int32_t> tokenize_markup(std::string_view text, bool add_bos) const;
    std::string token_text(int32_t token) const;  // bytes of one token ("" for control tokens)
    int32_t bos() const;
    int32_t eos() const;
    bool add_bos() const;
    bool is_end_of_generation(int32_t token) const;

    struct Impl;
    const Impl& impl() const { return *impl_; }

private:
    explicit Model(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace ember

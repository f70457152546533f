#pragma once
// Hyper-parameters of a decoder-only transformer, read from `{arch}.*` GGUF keys.

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "ember/model.h"
#include "gguf/gguf_reader.h"
#include "tensor/fp16.h"
#include "tensor/rope.h"

namespace ember::model {

// The FFN's activation, per neuron i with g_i = gate_i·x and v_i = up_i·x
// (docs/FORMATS.md §4.3).
enum class FfnGate {
    SiluPar,  // SiLU(g)·v       SwiGLU: standard LLaMA
    ReluPar,  // ReLU(g)·v       ReGLU: ReluLLaMA, ProSparse
    ReluSym,  // ReLU(g)·ReLU(v) Bamboo
    Relu,     // ReLU(v)         no gate: ReluFalcon
    GeluPar,  // GELU(g)·v       GeGLU: Gemma (GELU's tanh form, through F16 as GGML computes it)
};

// GGML's GELU: the tanh approximation, looked up for the input rounded to F16 and stored as F16
// (its table), exact beyond ±10. Upstream runs Gemma's FFN with it.
inline float gelu_as_ggml(float x) {
    if (x <= -10.0f) return 0.0f;
    if (x >= 10.0f) return x;
    const float h = tensor::fp16_to_f32(tensor::f32_to_fp16(x));
    const float y = 0.5f * h * (1.0f + std::tanh(0.79788456080286535588f * h * (1.0f + 0.044715f * h * h)));
    return tensor::fp16_to_f32(tensor::f32_to_fp16(y));
}

inline float ffn_activation_value(FfnGate gate, float g, float v) {
    const auto relu = [](float x) { return x > 0.0f ? x : 0.0f; };
    switch (gate) {
        case FfnGate::GeluPar: return gelu_as_ggml(g) * v;
        case FfnGate::SiluPar: return g / (1.0f + std::exp(-g)) * v;
        case FfnGate::ReluPar: return relu(g) * v;
        case FfnGate::ReluSym: return relu(g) * relu(v);
        case FfnGate::Relu: return relu(v);
    }
    return 0.0f;
}

// How a mixture-of-experts router turns its logits into expert weights (GGUF
// `{arch}.expert_gating_func`: 1 softmax, 2 sigmoid).
enum class ExpertGating { Softmax, Sigmoid };

struct HParams : ModelShape {
    std::string arch;
    int32_t n_rot = 0;
    float norm_eps = 1e-5f;
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;
    const float* rope_freq_factors = nullptr;  // [head_dim/2] `rope_freqs.weight`, in the model's file
    // Phi 3's long-context factors (`rope_factors_long`), used instead of the short ones
    // (rope_freq_factors) when the session's context is longer than n_ctx_orig; and its
    // `rope.scaling.attn_factor`, which scales the rotated Q and K.
    const float* rope_freq_factors_long = nullptr;
    int32_t n_ctx_orig = 0;
    float rope_attn_factor = 1.0f;
    FfnGate ffn_gate = FfnGate::SiluPar;
    std::string ffn_gate_source;  // why this activation: the file, the user, the architecture, a hint
    // Sparse (PowerInfer) files: the largest predictor rank, and the score threshold at or
    // above which a neuron counts as active. max_predictor_rank == 0: a dense model.
    int32_t max_predictor_rank = 0;
    bool fused_qkv = false;  // one QKV matrix (Falcon): the scratch needs room for its output
    bool fused_gate_up = false;  // ffn_up holds the gate's rows, then the up rows (Phi 3)
    // Q, K and V products add a bias (Qwen 2). A device then computes the products and the CPU
    // the rest of attention: the device's whole sub-layer has no biases.
    bool qkv_bias = false;
    // Q and K rows RMS-normalized per head before RoPE (Qwen 3). As with biases, the device runs
    // the products and the CPU the rest.
    bool qk_norm = false;
    tensor::RopePairs rope_pairs = tensor::RopePairs::Adjacent;
    float sparse_threshold = 0.0f;
    // `{arch}.attention.key_length`; models whose heads are not n_embd / n_head wide (Qwen 3)
    // write it, and then Q and the attention's output are n_head · head_dim long, not n_embd.
    int32_t n_embd_head = 0;
    // Sliding-window attention (Gemma, SmallThinker 21B): layers for which swa_layer() holds
    // attend to their last n_swa positions only and rotate with their own RoPE base and scale;
    // one layer of every swa_period attends to the whole context: the last of each period
    // (Gemma), or the first (swa_full_first, SmallThinker, whose full layers also skip RoPE:
    // full_layers_nope).
    int32_t n_swa = 0;
    int32_t swa_period = 0;
    bool swa_full_first = false;
    bool full_layers_nope = false;
    float rope_freq_base_swa = 10000.0f;
    float rope_freq_scale_swa = 1.0f;
    float attn_scale = 0.0f;              // scores' scale; 0: 1/sqrt(head_dim)
    float attn_softcap = 0.0f;            // scores = c·tanh(scores/c) before the softmax when > 0
    float final_logit_softcap = 0.0f;     // logits = c·tanh(logits/c) when > 0
    // Mixture of experts (SmallThinker): each layer's FFN is n_expert FFNs of n_ff neurons, of
    // which the router picks n_expert_used per token, weighted by its gating function's values
    // renormalized over the picked ones.
    int32_t n_expert = 0;
    int32_t n_expert_used = 0;
    ExpertGating expert_gating = ExpertGating::Softmax;
    // The router reads the layer's input before attention (SmallThinker), not ffn_norm's output.
    bool moe_routes_layer_input = false;
    // A dense model made sparse by calibration (ModelParams::activation_sparsity): no predictor;
    // the FFN computes every gate row, then a neuron's up and down rows only where |act(gate)|
    // exceeds its layer's calibrated threshold.
    bool gate_first = false;
    float activation_sparsity = 0.0f;
    // Gate first, and the gate reads only the rows of the FFN inputs above their layer's
    // threshold (ModelParams::sparse_ffn_input).
    bool sparse_ffn_input = false;
    // Gate first, and attention's Q, K, V and output products read only the rows of their inputs
    // above the layer's thresholds (ModelParams::sparse_attn_input): those four matrices are laid
    // out by input, so attention stays on the CPU.
    bool sparse_attn_input = false;
    // Whether it could: a dense (not PowerInfer, not mixture-of-experts) model with a gated FFN.
    bool gate_first_possible = false;

    // Runs the sparse FFN (model/sparse_ffn.h): a predictor's, or gate first.
    bool sparse() const { return max_predictor_rank > 0 || gate_first; }
    int32_t head_dim() const { return n_embd_head; }
    int32_t n_embd_q() const { return n_embd_head * n_head; }
    int32_t n_embd_gqa() const { return n_embd_head * n_head_kv; }
    // Whether a device can run the whole attention sub-layer with this layer's KV cache: its
    // kernels have no biases, no Q/K norms, no windows, soft-caps or score scales of their own,
    // and heads n_embd / n_head wide.
    bool device_attention_sublayer() const {
        return !qkv_bias && !qk_norm && n_embd_q() == n_embd && n_swa == 0 && attn_scale == 0.0f && attn_softcap == 0.0f &&
               rope_attn_factor == 1.0f;
    }
    bool swa_layer(int32_t il) const {
        if (n_swa == 0) return false;
        if (swa_period == 0) return true;
        return swa_full_first ? il % swa_period != 0 : il % swa_period < swa_period - 1;
    }
    bool rope_layer(int32_t il) const { return !full_layers_nope || swa_layer(il); }
    bool moe() const { return n_expert > 0; }
};

// `key` when present (an unsigned integer up to 2^24, else an error naming it), else fallback.
uint32_t optional_uint(const gguf::File& f, const std::string& key, uint32_t fallback);

// Reads the `{arch}.*` keys every supported architecture shares, with the norm epsilon under
// `{arch}.<eps_key>`; n_vocab from the token list. Throws EngineError naming the file and the
// key for a missing or invalid value.
HParams read_hparams(const gguf::File& file, const std::string& arch, const std::string& eps_key);

// The gated activation of a dense LLaMA-layout file, which carries no activation key of its own
// (docs/FORMATS.md §4.4): the user's choice, else Ember's `ember.ffn_activation` key, else
// signs of a ReLU model (PowerInfer's activation/ statistics next to the file, "relu" or
// "prosparse" in its name), else SiLU. Sets hp.ffn_gate and hp.ffn_gate_source.
void resolve_gated_activation(const gguf::File& file, FfnActivation requested, HParams& hp);
const char* ffn_gate_name(FfnGate gate);

// powerinfer.sparse_threshold (default 0), overridden by PowerInfer's environment variable
// LLAMA_SPARSE_PRED_THRESHOLD, overridden by the user's setting.
float resolve_sparse_threshold(const gguf::File& file, std::optional<float> requested);

}  // namespace ember::model

// `smallthinker` (PowerInfer's SmallThinker-4BA0.6B and -21BA3B): the Qwen-style attention (RoPE
// on NeoX pairs, grouped-query heads) with a mixture-of-experts FFN. Each layer's router reads
// the layer's input before attention, so a token's experts are known before its attention runs;
// the experts are ReGLU FFNs (ReLU(gate)·up), weighted by the router's softmax or sigmoid values
// renormalized over the top n_expert_used. The 21B model attends to a 4096-token window in three
// layers of four, and the fourth (the first of each four) attends to everything without RoPE.
// The LM head is tied to the embeddings when the file has no output.weight. It runs on the llama
// family's graph (model/llama_family.cpp).
#include "common/error.h"
#include "model/expert_ffn.h"
#include "model/llama_family.h"
#include "model/sparse_ffn.h"

namespace ember::model {

std::unique_ptr<Architecture> load_smallthinker(const gguf::File& file, const ModelParams& params) {
    const std::string p = "smallthinker.";
    HParams hp = read_hparams(file, "smallthinker", "attention.layer_norm_rms_epsilon");
    if (params.ffn_activation == FfnActivation::Silu)
        fail(file.path() + ": SmallThinker's experts run ReLU(gate)·up; --ffn-act silu does not apply");
    if (is_powerinfer_layout(file)) fail(file.path() + ": sparse (PowerInfer-layout) smallthinker files are not supported");
    hp.ffn_gate = FfnGate::ReluPar;
    hp.ffn_gate_source = "architecture";
    hp.rope_pairs = tensor::RopePairs::NeoX;
    read_expert_hparams(file, "smallthinker", hp);
    switch (optional_uint(file, p + "expert_gating_func", 0)) {
        case 1: hp.expert_gating = ExpertGating::Softmax; break;
        case 2: hp.expert_gating = ExpertGating::Sigmoid; break;
        default: fail(file.path() + ": " + p + "expert_gating_func must be 1 (softmax) or 2 (sigmoid)");
    }
    hp.n_swa = int32_t(optional_uint(file, p + "attention.sliding_window", 0));
    if (hp.n_swa > 0) {
        hp.swa_period = int32_t(optional_uint(file, p + "attention.sliding_window_pattern", 4));
        hp.swa_full_first = true;
        hp.full_layers_nope = true;
        hp.rope_freq_base_swa = float(file.get_float(p + "rope.freq_base_swa").value_or(hp.rope_freq_base));
        hp.rope_freq_scale_swa = hp.rope_freq_scale;
    }
    hp.moe_routes_layer_input = true;
    return load_llama_family(file, params, std::move(hp));
}

}  // namespace ember::model

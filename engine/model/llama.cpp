// `llama`: LLaMA, Llama 2, the ReLU models built on them (ReluLLaMA, ProSparse), and Mixtral's
// mixtures of experts (`llama.expert_count`). Dense files
// carry no activation key, so the activation is resolved from the user, Ember's key or hints
// (docs/FORMATS.md §4.4); PowerInfer's sparse files are ReLU(gate)·up by definition.
#include "common/error.h"
#include "model/expert_ffn.h"
#include "model/llama_family.h"
#include "model/sparse_ffn.h"

namespace ember::model {

std::unique_ptr<Architecture> load_llama(const gguf::File& file, const ModelParams& params) {
    HParams hp = read_hparams(file, "llama", "attention.layer_norm_rms_epsilon");
    if (is_powerinfer_layout(file)) {
        if (params.ffn_activation == FfnActivation::Silu)
            fail(file.path() + ": a PowerInfer sparse model runs ReLU(gate)·up; --ffn-act silu does not apply");
        hp.ffn_gate = FfnGate::ReluPar;
        hp.ffn_gate_source = "PowerInfer sparse file";
    } else {
        resolve_gated_activation(file, params.ffn_activation, hp);
    }
    // Mixtral's files: the llama graph with a mixture of experts in every layer (softmax router on
    // ffn_norm's output, the top ones renormalized), as qwen3moe's.
    if (optional_uint(file, "llama.expert_count", 0) > 0) {
        if (is_powerinfer_layout(file)) fail(file.path() + ": sparse (PowerInfer-layout) files with experts are not supported");
        read_expert_hparams(file, "llama", hp);
    }
    return load_llama_family(file, params, std::move(hp));
}

}  // namespace ember::model

// `phi3` (Phi-3, Phi-3.5 and Phi-4 dense models): the LLaMA graph with NeoX RoPE and two fused
// matrices, read as row ranges of one tensor: `attn_qkv` (Q's rows, K's, V's; some files split it
// as llama does) and `ffn_up` (the gate's n_ff rows, then the up rows). The 128k-context models
// carry two sets of RoPE frequency factors (long ones for contexts past
// `rope.scaling.original_context_length`) and a `rope.scaling.attn_factor`. Upstream ignores a
// phi3 file's sliding window, and so does Ember.
#include "common/error.h"
#include "model/architecture.h"
#include "model/llama_family.h"
#include "model/sparse_ffn.h"

namespace ember::model {

std::unique_ptr<Architecture> load_phi3(const gguf::File& file, const ModelParams& params) {
    HParams hp = read_hparams(file, "phi3", "attention.layer_norm_rms_epsilon");
    if (params.ffn_activation == FfnActivation::Relu)
        fail(file.path() + ": a phi3 model runs SiLU(gate)·up; --ffn-act relu does not apply");
    if (is_powerinfer_layout(file)) fail(file.path() + ": sparse (PowerInfer-layout) phi3 files are not supported");
    hp.ffn_gate = FfnGate::SiluPar;
    hp.ffn_gate_source = "architecture";
    hp.fused_gate_up = file.find_tensor("blk.0.ffn_gate.weight") == nullptr;
    hp.rope_pairs = tensor::RopePairs::NeoX;
    hp.n_ctx_orig = hp.n_ctx_train;
    if (auto orig = file.get_uint("phi3.rope.scaling.original_context_length")) {
        if (*orig == 0 || *orig > (1u << 24))
            fail(file.path() + ": metadata key 'phi3.rope.scaling.original_context_length' = " + std::to_string(*orig) +
                 " is out of range");
        hp.n_ctx_orig = int32_t(*orig);
    }
    if (auto f = file.get_float("phi3.rope.scaling.attn_factor")) {
        if (!(*f > 0.0 && *f < 100.0))
            fail(file.path() + ": metadata key 'phi3.rope.scaling.attn_factor' = " + std::to_string(*f) + " is out of range");
        hp.rope_attn_factor = float(*f);
    }
    return load_llama_family(file, params, std::move(hp));
}

}  // namespace ember::model

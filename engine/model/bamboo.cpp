// `bamboo`: Bamboo-7B base and DPO. LLaMA's graph with grouped-query attention and the "SYM"
// FFN, ReLU on both gate and up (docs/FORMATS.md §4.3), in dense and PowerInfer files alike.
#include "common/error.h"
#include "model/llama_family.h"

namespace ember::model {

std::unique_ptr<Architecture> load_bamboo(const gguf::File& file, const ModelParams& params) {
    HParams hp = read_hparams(file, "bamboo", "attention.layer_norm_rms_epsilon");
    if (params.ffn_activation == FfnActivation::Silu)
        fail(file.path() + ": Bamboo runs ReLU(gate)·ReLU(up); --ffn-act silu does not apply");
    hp.ffn_gate = FfnGate::ReluSym;
    hp.ffn_gate_source = "the bamboo architecture";
    return load_llama_family(file, params, std::move(hp));
}

}  // namespace ember::model

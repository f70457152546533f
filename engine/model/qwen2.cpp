// `qwen2` (Qwen 2 and 2.5, DeepSeek-R1's Qwen distills): the LLaMA graph with biases on the Q, K
// and V products and RoPE on NeoX pairs (rotate-half, as Hugging Face's checkpoints are not
// permuted for it), a SwiGLU FFN, and the LM head tied to the embeddings in the small models.
#include "common/error.h"
#include "model/architecture.h"
#include "model/llama_family.h"

namespace ember::model {

std::unique_ptr<Architecture> load_qwen2(const gguf::File& file, const ModelParams& params) {
    HParams hp = read_hparams(file, "qwen2", "attention.layer_norm_rms_epsilon");
    if (params.ffn_activation == FfnActivation::Relu)
        fail(file.path() + ": a qwen2 model runs SiLU(gate)·up; --ffn-act relu does not apply");
    hp.ffn_gate = FfnGate::SiluPar;
    hp.ffn_gate_source = "architecture";
    hp.qkv_bias = true;
    hp.rope_pairs = tensor::RopePairs::NeoX;
    return load_llama_family(file, params, std::move(hp));
}

}  // namespace ember::model

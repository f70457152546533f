// `qwen3` (Qwen 3 dense models): Qwen 2's graph without the Q/K/V biases, with every head's Q and
// K rows RMS-normalized (a weight per head dimension) before RoPE, and heads of
// `attention.key_length` dimensions, which need not be n_embd / n_head (Qwen3-0.6B: 16 heads of
// 128 over n_embd 1024).
#include "common/error.h"
#include "model/architecture.h"
#include "model/llama_family.h"

namespace ember::model {

std::unique_ptr<Architecture> load_qwen3(const gguf::File& file, const ModelParams& params) {
    HParams hp = read_hparams(file, "qwen3", "attention.layer_norm_rms_epsilon");
    if (params.ffn_activation == FfnActivation::Relu)
        fail(file.path() + ": a qwen3 model runs SiLU(gate)·up; --ffn-act relu does not apply");
    hp.ffn_gate = FfnGate::SiluPar;
    hp.ffn_gate_source = "architecture";
    hp.qk_norm = true;
    hp.rope_pairs = tensor::RopePairs::NeoX;
    return load_llama_family(file, params, std::move(hp));
}

}  // namespace ember::model

// `qwen2` (Qwen 2 and 2.5, DeepSeek-R1's Qwen distills) and `qwen3` (Qwen 3's dense models): the
// LLaMA graph with RoPE on NeoX pairs (rotate-half, as Hugging Face's checkpoints are not permuted
// for it), a SwiGLU FFN, and the LM head tied to the embeddings in the small models. Qwen 2 adds
// biases to the Q, K and V products; Qwen 3 instead RMS-normalizes every head's Q and K rows
// (a weight per head dimension) before RoPE, with heads of `attention.key_length` dimensions,
// which need not be n_embd / n_head (Qwen3-0.6B: 16 heads of 128 over n_embd 1024).
#include "common/error.h"
#include "model/architecture.h"
#include "model/llama_family.h"

namespace ember::model {
namespace {

std::unique_ptr<Architecture> load_qwen(const gguf::File& file, const ModelParams& params, const std::string& arch) {
    HParams hp = read_hparams(file, arch, "attention.layer_norm_rms_epsilon");
    if (params.ffn_activation == FfnActivation::Relu)
        fail(file.path() + ": a " + arch + " model runs SiLU(gate)·up; --ffn-act relu does not apply");
    hp.ffn_gate = FfnGate::SiluPar;
    hp.ffn_gate_source = "architecture";
    hp.qkv_bias = arch == "qwen2";
    hp.qk_norm = arch == "qwen3";
    hp.rope_pairs = tensor::RopePairs::NeoX;
    return load_llama_family(file, params, std::move(hp));
}

}  // namespace

std::unique_ptr<Architecture> load_qwen2(const gguf::File& file, const ModelParams& params) {
    return load_qwen(file, params, "qwen2");
}

std::unique_ptr<Architecture> load_qwen3(const gguf::File& file, const ModelParams& params) {
    return load_qwen(file, params, "qwen3");
}

}  // namespace ember::model

// `qwen2` (Qwen 2 and 2.5, DeepSeek-R1's Qwen distills) and `qwen3` (Qwen 3's dense models): the
// LLaMA graph with RoPE on NeoX pairs (rotate-half, as Hugging Face's checkpoints are not permuted
// for it), a SwiGLU FFN, and the LM head tied to the embeddings in the small models. Qwen 2 adds
// biases to the Q, K and V products; Qwen 3 instead RMS-normalizes every head's Q and K rows
// (a weight per head dimension) before RoPE, with heads of `attention.key_length` dimensions,
// which need not be n_embd / n_head (Qwen3-0.6B: 16 heads of 128 over n_embd 1024). `qwen3moe`
// (Qwen3-30B-A3B, 235B-A22B) is Qwen 3 with a mixture of SwiGLU experts for each FFN.
#include "common/error.h"
#include "model/architecture.h"
#include "model/llama_family.h"
#include "model/sparse_ffn.h"

namespace ember::model {
namespace {

std::unique_ptr<Architecture> load_qwen(const gguf::File& file, const ModelParams& params, const std::string& arch) {
    HParams hp = read_hparams(file, arch, "attention.layer_norm_rms_epsilon");
    if (params.ffn_activation == FfnActivation::Relu)
        fail(file.path() + ": a " + arch + " model runs SiLU(gate)·up; --ffn-act relu does not apply");
    hp.ffn_gate = FfnGate::SiluPar;
    hp.ffn_gate_source = "architecture";
    hp.qkv_bias = arch == "qwen2";
    hp.qk_norm = arch != "qwen2";
    hp.rope_pairs = tensor::RopePairs::NeoX;
    if (arch == "qwen3moe") {
        if (is_powerinfer_layout(file)) fail(file.path() + ": sparse (PowerInfer-layout) qwen3moe files are not supported");
        read_expert_hparams(file, arch, hp);  // softmax over the router's logits, the top ones renormalized
    }
    return load_llama_family(file, params, std::move(hp));
}

}  // namespace

std::unique_ptr<Architecture> load_qwen2(const gguf::File& file, const ModelParams& params) {
    return load_qwen(file, params, "qwen2");
}

std::unique_ptr<Architecture> load_qwen3(const gguf::File& file, const ModelParams& params) {
    return load_qwen(file, params, "qwen3");
}

std::unique_ptr<Architecture> load_qwen3moe(const gguf::File& file, const ModelParams& params) {
    return load_qwen(file, params, "qwen3moe");
}

}  // namespace ember::model

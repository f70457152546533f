// `gemma2` and `gemma3` (Gemma 2's and Gemma 3's text models): the LLaMA layer with more norms
// and a different FFN (docs/FORMATS.md §4.7). The embeddings are scaled by sqrt(n_embd); the
// attention's and the FFN's outputs are each RMS-normalized again (attn_post_norm, ffn_post_norm)
// before they join the residual stream; the FFN is GeGLU; NeoX RoPE. Sliding-window layers
// alternate with whole-context ones (Gemma 2: one in two, window 4096; Gemma 3: five in six, with
// RoPE base 10000). Gemma 3 RMS-normalizes Q and K per head; Gemma 2 instead soft-caps the
// attention scores and the logits. The LM head is tied to the embeddings.
#include <array>
#include <cmath>
#include <vector>

#include "common/error.h"
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/sparse_ffn.h"
#include "model/tensor_binding.h"
#include "tensor/norms.h"

namespace ember::model {
namespace {

struct GemmaLayer {
    const float* attn_norm;       // [n_embd]
    tensor::WeightView wq, wk, wv;  // [n_embd] -> [n_embd_q], [n_embd_gqa], [n_embd_gqa]
    tensor::WeightView wo;        // [n_embd_q] -> [n_embd]
    std::array<const float*, 2> qk_norm{};  // [head_dim] each; Gemma 3 only
    const float* attn_post_norm;  // [n_embd]
    const float* ffn_norm;        // [n_embd]
    tensor::WeightView gate, up;  // [n_embd] -> [n_ff]
    tensor::WeightView down;      // [n_ff] -> [n_embd]
    const float* ffn_post_norm;   // [n_embd]
};

class Gemma final : public Architecture {
public:
    Gemma(const gguf::File& file, HParams hp) {
        hp_ = std::move(hp);
        const int64_t n_embd = hp_.n_embd, n_q = hp_.n_embd_q(), n_gqa = hp_.n_embd_gqa(), n_ff = hp_.n_ff;
        TensorBinder bind(file);
        uint64_t ffn_bytes = 0;
        token_embd_ = bind.stored_matrix("token_embd.weight", n_embd, hp_.n_vocab);
        output_norm_ = bind.vector("output_norm.weight", n_embd);
        output_ = file.find_tensor("output.weight") ? bind.product_matrix("output.weight", n_embd, hp_.n_vocab) : token_embd_;
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const std::string p = "blk." + std::to_string(il) + ".";
            GemmaLayer L{
                bind.vector(p + "attn_norm.weight", n_embd),
                bind.product_matrix(p + "attn_q.weight", n_embd, n_q),
                bind.product_matrix(p + "attn_k.weight", n_embd, n_gqa),
                bind.product_matrix(p + "attn_v.weight", n_embd, n_gqa),
                bind.product_matrix(p + "attn_output.weight", n_q, n_embd),
                {},
                bind.vector(p + "post_attention_norm.weight", n_embd),
                bind.vector(p + "ffn_norm.weight", n_embd),
                bind.product_matrix(p + "ffn_gate.weight", n_embd, n_ff),
                bind.product_matrix(p + "ffn_up.weight", n_embd, n_ff),
                bind.product_matrix(p + "ffn_down.weight", n_ff, n_embd),
                bind.vector(p + "post_ffw_norm.weight", n_embd),
            };
            if (hp_.qk_norm)
                L.qk_norm = {bind.vector(p + "attn_q_norm.weight", hp_.head_dim()),
                             bind.vector(p + "attn_k_norm.weight", hp_.head_dim())};
            ffn_bytes += matrix_bytes(L.gate) + matrix_bytes(L.up) + matrix_bytes(L.down);
            layers_.push_back(L);
        }
        set_totals(bind, token_embd_, output_, ffn_bytes, 0, 3, layers_.front().gate.type);
        output_norm_bytes_ = uint64_t(n_embd) * sizeof(float);
    }

    backend::FfnRows ffn_rows(int32_t) const override { return {}; }

    LayerMatrices layer_matrices(int32_t il) const override {
        const GemmaLayer& L = layers_[size_t(il)];
        // The post-norms travel with their sub-layer's other norm.
        const uint64_t norms = 2 * uint64_t(hp_.n_embd) * sizeof(float);
        return {{L.wq, L.wk, L.wv, L.wo}, {}, {L.gate, L.up, L.down}, {}, norms, norms};
    }

    const tensor::WeightView& lm_head() const override { return output_; }

    void forward(const int32_t* tokens, int32_t n, KvCache& kv, Executor& ex, float* logits,
                 bool logits_all) const override {
        const int64_t n_embd = hp_.n_embd;
        Scratch& s = ex.scratch();
        float* x = s.x.data();
        embed_tokens(token_embd_, tokens, n, x);
        const float scale = std::sqrt(float(n_embd));
        for (int64_t i = 0; i < n * n_embd; ++i) x[i] *= scale;
        ex.begin_batch(kv, n);
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const GemmaLayer& L = layers_[size_t(il)];
            const tensor::WeightView qkv[] = {L.wq, L.wk, L.wv};
            float* branch = s.ffn_in.data();  // free until the FFN's norm
            ex.attention_sublayer(il, {{L.attn_norm, nullptr, hp_.norm_eps}, qkv, L.wo, hp_.rope_pairs, false, {}, L.qk_norm},
                                  kv, x, branch);
            tensor::rms_norm(branch, L.attn_post_norm, branch, n_embd, n, hp_.norm_eps);
            add_in_place(x, branch, n * n_embd);
            ex.emit("ffn_inp", il, x, n_embd);
            tensor::rms_norm(x, L.ffn_norm, s.ffn_in.data(), n_embd, n, hp_.norm_eps);
            ex.emit("ffn_norm", il, s.ffn_in.data(), n_embd);
            ex.dense_ffn(il, {L.gate, L.up, L.down}, s.ffn_in.data(), s.ffn_out.data());
            tensor::rms_norm(s.ffn_out.data(), L.ffn_post_norm, s.ffn_out.data(), n_embd, n, hp_.norm_eps);
            ex.emit("ffn_out", il, s.ffn_out.data(), n_embd);
            add_in_place(x, s.ffn_out.data(), n * n_embd);
            ex.emit("l_out", il, x, n_embd);
        }
        kv.commit(n);
        const int32_t first = logits_all ? 0 : n - 1;
        const int32_t count = n - first;
        tensor::rms_norm(x + size_t(first) * n_embd, output_norm_, s.out_norm.data(), n_embd, count, hp_.norm_eps);
        ex.emit("result_norm", -1, s.out_norm.data(), n_embd, first, count);
        ex.lm_head(output_, s.out_norm.data(), count, logits);
        if (const float cap = hp_.final_logit_softcap; cap > 0.0f)
            for (int64_t i = 0; i < int64_t(count) * hp_.n_vocab; ++i) logits[i] = cap * std::tanh(logits[i] / cap);
    }

private:
    tensor::WeightView token_embd_;
    const float* output_norm_ = nullptr;
    tensor::WeightView output_;
    std::vector<GemmaLayer> layers_;
};

std::unique_ptr<Architecture> load_gemma(const gguf::File& file, const ModelParams& params, const std::string& arch) {
    const bool gemma3 = arch == "gemma3";
    const std::string p = arch + ".";
    HParams hp = read_hparams(file, arch, "attention.layer_norm_rms_epsilon");
    if (params.ffn_activation == FfnActivation::Relu)
        fail(file.path() + ": a " + arch + " model runs GELU(gate)·up; --ffn-act relu does not apply");
    if (is_powerinfer_layout(file)) fail(file.path() + ": sparse (PowerInfer-layout) " + arch + " files are not supported");
    hp.ffn_gate = FfnGate::GeluPar;
    hp.ffn_gate_source = "architecture";
    hp.qk_norm = gemma3;
    hp.rope_pairs = tensor::RopePairs::NeoX;
    // The defaults are llama.cpp's for files that lack a key.
    hp.n_swa = int32_t(optional_uint(file, p + "attention.sliding_window", gemma3 ? 0 : 4096));
    hp.swa_period = int32_t(optional_uint(file, p + "attention.sliding_window_pattern", gemma3 ? 6 : 2));
    hp.rope_freq_base_swa = gemma3 ? 10000.0f : hp.rope_freq_base;
    hp.rope_freq_scale_swa = gemma3 ? 1.0f : hp.rope_freq_scale;
    if (auto base = file.get_float(p + "rope.freq_base_swa")) hp.rope_freq_base_swa = float(*base);
    if (!gemma3) hp.attn_softcap = float(file.get_float(p + "attn_logit_softcapping").value_or(50.0));
    hp.final_logit_softcap = float(file.get_float(p + "final_logit_softcapping").value_or(gemma3 ? 0.0 : 30.0));
    // As Google's reference and llama.cpp: queries scaled by 1/sqrt(head_dim), except in the
    // 27B models (Gemma 2: 46 layers, Gemma 3: 62), whose query_pre_attn_scalar is n_embd / n_head.
    if (hp.n_layer == (gemma3 ? 62 : 46)) hp.attn_scale = 1.0f / std::sqrt(float(hp.n_embd / hp.n_head));
    return std::make_unique<Gemma>(file, std::move(hp));
}

}  // namespace

std::unique_ptr<Architecture> load_gemma2(const gguf::File& file, const ModelParams& params) {
    return load_gemma(file, params, "gemma2");
}

std::unique_ptr<Architecture> load_gemma3(const gguf::File& file, const ModelParams& params) {
    return load_gemma(file, params, "gemma3");
}

}  // namespace ember::model

// `smallthinker` (PowerInfer's SmallThinker-4BA0.6B and -21BA3B): the Qwen-style attention (RoPE
// on NeoX pairs, grouped-query heads) with a mixture-of-experts FFN. Each layer's router reads
// the layer's input before attention, so a token's experts are known before its attention runs;
// the experts are ReGLU FFNs (ReLU(gate)·up), weighted by the router's softmax or sigmoid values
// renormalized over the top n_expert_used. The 21B model attends to a 4096-token window in three
// layers of four, and the fourth (the first of each four) attends to everything without RoPE.
// The LM head is tied to the embeddings when the file has no output.weight.
#include <vector>

#include "common/error.h"
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/sparse_ffn.h"
#include "model/tensor_binding.h"
#include "tensor/norms.h"

namespace ember::model {
namespace {

struct SmallThinkerLayer {
    const float* attn_norm;     // [n_embd]
    tensor::WeightView wq;      // [n_embd] -> [n_embd_q]
    tensor::WeightView wk;      // [n_embd] -> [n_embd_gqa]
    tensor::WeightView wv;      // [n_embd] -> [n_embd_gqa]
    tensor::WeightView wo;      // [n_embd_q] -> [n_embd]
    const float* ffn_norm;      // [n_embd]
    MoeLayer moe;
};

class SmallThinker final : public Architecture {
public:
    SmallThinker(const gguf::File& file, HParams hp) {
        hp_ = std::move(hp);
        const int64_t n_embd = hp_.n_embd, n_q = hp_.n_embd_q(), n_gqa = hp_.n_embd_gqa();
        TensorBinder bind(file);
        token_embd_ = bind.stored_matrix("token_embd.weight", n_embd, hp_.n_vocab);
        output_norm_ = bind.vector("output_norm.weight", n_embd);
        output_ = bind.has("output.weight") ? bind.product_matrix("output.weight", n_embd, hp_.n_vocab) : token_embd_;
        uint64_t ffn_bytes = 0, expert_bytes = 0;
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const std::string p = "blk." + std::to_string(il) + ".";
            SmallThinkerLayer L{};
            L.attn_norm = bind.vector(p + "attn_norm.weight", n_embd);
            L.wq = bind.product_matrix(p + "attn_q.weight", n_embd, n_q);
            L.wk = bind.product_matrix(p + "attn_k.weight", n_embd, n_gqa);
            L.wv = bind.product_matrix(p + "attn_v.weight", n_embd, n_gqa);
            L.wo = bind.product_matrix(p + "attn_output.weight", n_q, n_embd);
            L.ffn_norm = bind.vector(p + "ffn_norm.weight", n_embd);
            L.moe = bind_moe_layer(bind, file, p, hp_, &expert_bytes);
            ffn_bytes += matrix_bytes(L.moe.router);
            layers_.push_back(L);
        }
        // A token reads n_expert_used experts of each layer's n_expert.
        const uint64_t unread = expert_bytes / uint64_t(hp_.n_expert) * uint64_t(hp_.n_expert - hp_.n_expert_used);
        set_totals(bind, token_embd_, output_, ffn_bytes + expert_bytes, 0, 3, layers_.front().moe.experts.gate.type, unread);
        output_norm_bytes_ = uint64_t(n_embd) * sizeof(float);
    }

    backend::FfnRows ffn_rows(int32_t) const override { return {}; }

    LayerMatrices layer_matrices(int32_t il) const override {
        const SmallThinkerLayer& L = layers_[size_t(il)];
        const uint64_t norm = uint64_t(hp_.n_embd) * sizeof(float);
        return LayerMatrices{{L.wq, L.wk, L.wv, L.wo}, {}, {}, expert_matrices(L.moe.experts, hp_), norm, 0};
    }

    const tensor::WeightView& lm_head() const override { return output_; }

    void forward(const int32_t* tokens, int32_t n, KvCache& kv, Executor& ex, float* logits,
                 bool logits_all) const override {
        const int64_t n_embd = hp_.n_embd;
        Scratch& s = ex.scratch();
        embed_tokens(token_embd_, tokens, n, s.x.data());
        ex.begin_batch(kv, n);
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const SmallThinkerLayer& L = layers_[size_t(il)];
            ex.route(il, L.moe.router, s.x.data());
            const tensor::WeightView qkv[] = {L.wq, L.wk, L.wv};
            ex.attention_sublayer(il, {{L.attn_norm, nullptr, hp_.norm_eps}, qkv, L.wo, hp_.rope_pairs, true}, kv,
                                  s.x.data(), s.x.data());
            ex.emit("ffn_inp", il, s.x.data(), n_embd);
            tensor::rms_norm(s.x.data(), L.ffn_norm, s.ffn_in.data(), n_embd, n, hp_.norm_eps);
            ex.emit("ffn_norm", il, s.ffn_in.data(), n_embd);
            ex.moe_ffn(il, L.moe.experts, s.ffn_in.data(), s.ffn_out.data());
            ex.emit("ffn_out", il, s.ffn_out.data(), n_embd);
            add_in_place(s.x.data(), s.ffn_out.data(), n * n_embd);
            ex.emit("l_out", il, s.x.data(), n_embd);
        }
        kv.commit(n);
        const int32_t first = logits_all ? 0 : n - 1;
        const int32_t count = n - first;
        tensor::rms_norm(s.x.data() + size_t(first) * n_embd, output_norm_, s.out_norm.data(), n_embd, count, hp_.norm_eps);
        ex.emit("result_norm", -1, s.out_norm.data(), n_embd, first, count);
        ex.lm_head(output_, s.out_norm.data(), count, logits);
    }

private:
    tensor::WeightView token_embd_;
    const float* output_norm_ = nullptr;
    tensor::WeightView output_;
    std::vector<SmallThinkerLayer> layers_;
};

}  // namespace

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
    return std::make_unique<SmallThinker>(file, std::move(hp));
}

}  // namespace ember::model

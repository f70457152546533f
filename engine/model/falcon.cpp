// `falcon`: Falcon and ReluFalcon-40B (docs/FORMATS.md §4.5). LayerNorm with bias,
// one fused QKV matrix (rows already ordered [all Q][all K][all V]), RoPE on NeoX pairs, and a
// parallel residual: attention and FFN both read the layer input, x' = x + attn + ffn. The FFN
// is ReLU(up·x) without a gate. Falcon-40B normalizes separately for attention (attn_norm_2)
// and the FFN (attn_norm); Falcon-7B shares one norm. The sparse predictor reads the raw layer
// input x, not a normalized one.
#include <algorithm>
#include <vector>

#include "common/error.h"
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/sparse_ffn.h"
#include "model/tensor_binding.h"
#include "tensor/norms.h"

namespace ember::model {
namespace {

struct Norm {
    const float* w = nullptr;
    const float* b = nullptr;
};

struct FalconLayer {
    Norm ffn_norm;             // attn_norm: feeds the FFN, and attention too when there is no attn_norm_2
    Norm attn_norm;            // attn_norm_2 when present, else the same as ffn_norm
    tensor::WeightView wqkv;   // [n_embd] -> [n_embd + 2 n_embd_gqa]
    tensor::WeightView wo;     // [n_embd] -> [n_embd]
    tensor::WeightView up;     // [n_embd] -> [n_ff]
    tensor::WeightView down;   // [n_ff] -> [n_embd] (dense files)
    SparseFfnWeights sparse;   // up, down_t, fc1, fc2 (PowerInfer files)
};

class Falcon final : public Architecture {
public:
    Falcon(const gguf::File& file, const ModelParams& params) {
        hp_ = read_hparams(file, "falcon", "attention.layer_norm_epsilon");
        if (params.ffn_activation == FfnActivation::Silu)
            fail(file.path() + ": Falcon's FFN is ReLU(up) without a gate; --ffn-act silu does not apply");
        hp_.ffn_gate = FfnGate::Relu;
        hp_.ffn_gate_source = "the falcon architecture";
        hp_.fused_qkv = true;
        const int64_t n_embd = hp_.n_embd, n_ff = hp_.n_ff, n_gqa = hp_.n_embd_gqa(), n_vocab = hp_.n_vocab;

        TensorBinder bind(file);
        uint64_t ffn_bytes = 0, predictor_bytes = 0;
        const auto norm = [&](const std::string& name) {
            return Norm{bind.vector(name + ".weight", n_embd), bind.vector(name + ".bias", n_embd)};
        };
        token_embd_ = bind.stored_matrix("token_embd.weight", n_embd, n_vocab);
        output_norm_ = norm("output_norm");
        output_ = bind.has("output.weight") ? bind.product_matrix("output.weight", n_embd, n_vocab) : token_embd_;
        const bool sparse = is_powerinfer_layout(file);
        if (sparse) hp_.sparse_threshold = resolve_sparse_threshold(file, params.sparse_threshold);
        layers_.reserve(size_t(hp_.n_layer));
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const std::string p = "blk." + std::to_string(il) + ".";
            FalconLayer L;
            L.ffn_norm = norm(p + "attn_norm");
            L.attn_norm = bind.has(p + "attn_norm_2.weight") ? norm(p + "attn_norm_2") : L.ffn_norm;
            L.wqkv = bind.product_matrix(p + "attn_qkv.weight", n_embd, n_embd + 2 * n_gqa);
            L.wo = bind.product_matrix(p + "attn_output.weight", n_embd, n_embd);
            // The sparse FFN reads single up rows.
            L.up = sparse ? bind.matrix(p + "ffn_up.weight", n_embd, n_ff) : bind.product_matrix(p + "ffn_up.weight", n_embd, n_ff);
            if (sparse) {
                const tensor::WeightView fc1 = bind.matrix_any_rows(p + "fc1.weight", n_embd, n_ff);
                L.sparse = SparseFfnWeights{{}, L.up, bind.stored_matrix(p + "ffn_down_t.weight", n_embd, n_ff), fc1,
                                            bind.matrix(p + "fc2.weight", fc1.n_rows, n_ff), {}};
                hp_.max_predictor_rank = std::max(hp_.max_predictor_rank, int32_t(fc1.n_rows));
                predictor_bytes += matrix_bytes(fc1) + matrix_bytes(L.sparse.fc2);
            } else {
                L.down = bind.product_matrix(p + "ffn_down.weight", n_ff, n_embd);
            }
            ffn_bytes += matrix_bytes(L.up) + matrix_bytes(sparse ? L.sparse.down_t : L.down);
            layers_.push_back(L);
        }
        set_totals(bind, token_embd_, output_, ffn_bytes, predictor_bytes, 2, layers_.front().up.type);
        output_norm_bytes_ = 2 * uint64_t(n_embd) * sizeof(float);
    }

    backend::FfnRows ffn_rows(int32_t il) const override {
        const FalconLayer& L = layers_[size_t(il)];
        return {{}, L.sparse.up, L.sparse.down_t};
    }

    LayerMatrices layer_matrices(int32_t il) const override {
        const FalconLayer& L = layers_[size_t(il)];
        const uint64_t norm = 2 * uint64_t(hp_.n_embd) * sizeof(float);  // weight and bias
        LayerMatrices m{{L.wqkv, L.wo}, {}, {}, {}, L.attn_norm.w != L.ffn_norm.w ? norm : 0, norm};
        if (sparse())
            m.predictor = {L.sparse.fc1, L.sparse.fc2};
        else
            m.ffn = {L.up, L.down};
        return m;
    }

    const tensor::WeightView& lm_head() const override { return output_; }

    void forward(const int32_t* tokens, int32_t n, KvCache& kv, Executor& ex, float* logits,
                 bool logits_all) const override {
        const int64_t n_embd = hp_.n_embd;
        Scratch& s = ex.scratch();
        embed_tokens(token_embd_, tokens, n, s.x.data());
        ex.begin_batch(kv, n);
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const FalconLayer& L = layers_[size_t(il)];
            // Both branches read the layer input; attention's result goes to s.attn_out.
            const tensor::WeightView qkv[] = {L.wqkv};
            ex.attention_sublayer(il, {{L.attn_norm.w, L.attn_norm.b, hp_.norm_eps}, qkv, L.wo, tensor::RopePairs::NeoX, false},
                                  kv, s.x.data(), s.attn_out.data());
            ex.emit("ffn_inp", il, s.x.data(), n_embd);
            tensor::layer_norm(s.x.data(), L.ffn_norm.w, L.ffn_norm.b, s.ffn_in.data(), n_embd, n, hp_.norm_eps);
            ex.emit("ffn_norm", il, s.ffn_in.data(), n_embd);
            if (s.sparse)
                ex.sparse_ffn(il, L.sparse, s.x.data(), s.ffn_in.data(), s.ffn_out.data());
            else
                ex.dense_ffn(il, {{}, L.up, L.down}, s.ffn_in.data(), s.ffn_out.data());
            // Summed in the reference's order: (ffn + attn) + x.
            ex.emit("ffn_out", il, s.ffn_out.data(), n_embd);
            for (int64_t i = 0; i < n * n_embd; ++i)
                s.x[size_t(i)] = (s.ffn_out[size_t(i)] + s.attn_out[size_t(i)]) + s.x[size_t(i)];
            ex.emit("l_out", il, s.x.data(), n_embd);
        }
        kv.commit(n);
        const int32_t first = logits_all ? 0 : n - 1;
        const int32_t count = n - first;
        tensor::layer_norm(s.x.data() + size_t(first) * n_embd, output_norm_.w, output_norm_.b, s.out_norm.data(), n_embd,
                           count, hp_.norm_eps);
        ex.emit("result_norm", -1, s.out_norm.data(), n_embd, first, count);
        ex.lm_head(output_, s.out_norm.data(), count, logits);
    }

private:
    tensor::WeightView token_embd_;
    Norm output_norm_;
    tensor::WeightView output_;
    std::vector<FalconLayer> layers_;
};

}  // namespace

std::unique_ptr<Architecture> load_falcon(const gguf::File& file, const ModelParams& params) {
    return std::make_unique<Falcon>(file, params);
}

}  // namespace ember::model

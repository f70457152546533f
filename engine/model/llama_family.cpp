#include "model/llama_family.h"

#include <algorithm>
#include <vector>

#include "common/error.h"
#include "model/sparse_ffn.h"
#include "model/tensor_binding.h"
#include "tensor/norms.h"

namespace ember::model {
namespace {

struct LlamaLayer {
    const float* attn_norm;     // [n_embd]
    tensor::WeightView wq;      // [n_embd] -> [n_embd], rows permuted for adjacent-pair RoPE
    tensor::WeightView wk;      // [n_embd] -> [n_embd_gqa], likewise
    tensor::WeightView wv;      // [n_embd] -> [n_embd_gqa]
    tensor::WeightView wo;      // [n_embd] -> [n_embd]
    const float* ffn_norm;      // [n_embd]
    tensor::WeightView gate;    // [n_embd] -> [n_ff]
    tensor::WeightView up;      // [n_embd] -> [n_ff]
    tensor::WeightView down;    // [n_ff] -> [n_embd] (dense files)
    SparseFfnWeights sparse;    // gate, up, down_t, fc1, fc2 (PowerInfer files)
};

class LlamaFamily final : public Architecture {
public:
    LlamaFamily(const gguf::File& file, const ModelParams& params, HParams hp) {
        hp_ = std::move(hp);
        const int64_t n_embd = hp_.n_embd, n_ff = hp_.n_ff, n_gqa = hp_.n_embd_gqa(), n_vocab = hp_.n_vocab;

        TensorBinder bind(file);
        uint64_t ffn_bytes = 0, predictor_bytes = 0;
        token_embd_ = bind.stored_matrix("token_embd.weight", n_embd, n_vocab);
        output_norm_ = bind.vector("output_norm.weight", n_embd);
        // Files with a tied LM head have no output.weight.
        output_ = file.find_tensor("output.weight") ? bind.matrix("output.weight", n_embd, n_vocab) : token_embd_;
        const bool sparse = is_powerinfer_layout(file);
        if (sparse) hp_.sparse_threshold = resolve_sparse_threshold(file, params.sparse_threshold);
        layers_.reserve(size_t(hp_.n_layer));
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const std::string p = "blk." + std::to_string(il) + ".";
            LlamaLayer L{
                bind.vector(p + "attn_norm.weight", n_embd),
                bind.matrix(p + "attn_q.weight", n_embd, n_embd),
                bind.matrix(p + "attn_k.weight", n_embd, n_gqa),
                bind.matrix(p + "attn_v.weight", n_embd, n_gqa),
                bind.matrix(p + "attn_output.weight", n_embd, n_embd),
                bind.vector(p + "ffn_norm.weight", n_embd),
                bind.matrix(p + "ffn_gate.weight", n_embd, n_ff),
                bind.matrix(p + "ffn_up.weight", n_embd, n_ff),
                {},
                {},
            };
            if (sparse) {
                const tensor::WeightView fc1 = bind.matrix_any_rows(p + "fc1.weight", n_embd, n_ff);
                L.sparse = SparseFfnWeights{L.gate, L.up, bind.stored_matrix(p + "ffn_down_t.weight", n_embd, n_ff), fc1,
                                            bind.matrix(p + "fc2.weight", fc1.n_rows, n_ff)};
                hp_.max_predictor_rank = std::max(hp_.max_predictor_rank, int32_t(fc1.n_rows));
            } else {
                L.down = bind.matrix(p + "ffn_down.weight", n_ff, n_embd);
            }
            ffn_bytes += matrix_bytes(L.gate) + matrix_bytes(L.up) + matrix_bytes(sparse ? L.sparse.down_t : L.down);
            if (sparse) predictor_bytes += matrix_bytes(L.sparse.fc1) + matrix_bytes(L.sparse.fc2);
            layers_.push_back(L);
        }
        set_totals(bind, token_embd_, output_, ffn_bytes, predictor_bytes, 3, layers_.front().gate.type);
    }

    backend::FfnRows ffn_rows(int32_t il) const override {
        const LlamaLayer& L = layers_[size_t(il)];
        return {L.sparse.gate, L.sparse.up, L.sparse.down_t};
    }

    sparse::PlacementCosts placement_costs(int32_t n_ctx) const override {
        sparse::PlacementCosts c;
        const uint64_t norm = uint64_t(hp_.n_embd) * sizeof(float);
        for (const LlamaLayer& L : layers_) {
            c.attn_bytes.push_back(norm + matrix_bytes(L.wq) + matrix_bytes(L.wk) + matrix_bytes(L.wv) + matrix_bytes(L.wo));
            c.predictor_bytes.push_back(matrix_bytes(L.sparse.fc1) + matrix_bytes(L.sparse.fc2));
            c.ffn_norm_bytes.push_back(norm);
            c.neuron_bytes.push_back(L.sparse.gate.row_bytes + L.sparse.up.row_bytes + L.sparse.down_t.row_bytes);
            c.n_ff.push_back(hp_.n_ff);
        }
        c.output_bytes = matrix_bytes(output_) + norm;
        c.kv_k_bytes = c.kv_v_bytes = kv_cache_half_bytes(hp_, n_ctx);
        return c;
    }

    std::vector<tensor::WeightView> device_matrices(const sparse::Placement& p) const override {
        std::vector<tensor::WeightView> m;
        for (int32_t il = 0; il < p.n_attn_layers; ++il) {
            const LlamaLayer& L = layers_[size_t(il)];
            m.insert(m.end(), {L.wq, L.wk, L.wv, L.wo});
        }
        for (int32_t il = 0; il < p.n_predictor_layers; ++il)
            m.insert(m.end(), {layers_[size_t(il)].sparse.fc1, layers_[size_t(il)].sparse.fc2});
        if (p.output_on_device) m.push_back(output_);
        return m;
    }

    void forward(const int32_t* tokens, int32_t n, KvCache& kv, Scratch& s, float* logits,
                 bool logits_all) const override {
        const int64_t n_embd = hp_.n_embd, n_ff = hp_.n_ff;
        embed_tokens(token_embd_, tokens, n, s.x.data());
        rope_angles(hp_, kv.n_past(), n, s);
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const LlamaLayer& L = layers_[size_t(il)];
            const tensor::WeightView qkv[] = {L.wq, L.wk, L.wv};
            attention_sublayer({{L.attn_norm, nullptr, hp_.norm_eps}, qkv, L.wo, tensor::RopePairs::Adjacent, true}, hp_,
                               il, n, kv, s.x.data(), s.x.data(), s);
            // Feed-forward.
            tensor::rms_norm(s.x.data(), L.ffn_norm, s.xn.data(), n_embd, n, hp_.norm_eps);
            if (s.sparse) {
                // The predictor reads the residual before ffn_norm (powerinfer-format.md §2.6).
                sparse_ffn(il, L.sparse, hp_.ffn_gate, hp_.sparse_threshold, s.x.data(), s.xn.data(), n, s.out.data(),
                           s, *s.sparse);
            } else {
                tensor::matmul(s.pool, L.gate, s.xn.data(), n, s.gate.data(), s.prepared);
                tensor::matmul(s.pool, L.up, s.xn.data(), n, s.up.data(), s.prepared);
                ffn_activation(hp_.ffn_gate, s.gate.data(), s.up.data(), n * n_ff);
                tensor::matmul(s.pool, L.down, s.up.data(), n, s.out.data(), s.prepared);
            }
            add_in_place(s.x.data(), s.out.data(), n * n_embd);
        }
        kv.commit(n);
        // Output head, for the last token or all of them.
        const int32_t first = logits_all ? 0 : n - 1;
        const int32_t count = n - first;
        tensor::rms_norm(s.x.data() + size_t(first) * n_embd, output_norm_, s.xn.data(), n_embd, count, hp_.norm_eps);
        linear(output_, s.xn.data(), count, logits, s);
    }

private:
    tensor::WeightView token_embd_;  // [n_embd] x n_vocab rows
    const float* output_norm_ = nullptr;
    tensor::WeightView output_;      // [n_embd] -> [n_vocab]
    std::vector<LlamaLayer> layers_;
};

}  // namespace

std::unique_ptr<Architecture> load_llama_family(const gguf::File& file, const ModelParams& params, HParams hp) {
    return std::make_unique<LlamaFamily>(file, params, std::move(hp));
}

}  // namespace ember::model

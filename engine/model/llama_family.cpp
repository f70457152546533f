#include "model/llama_family.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <vector>

#include "common/error.h"
#include "common/utf8_path.h"
#include "sparse/sparsity_file.h"
#include "model/blocks.h"
#include "model/sparse_ffn.h"
#include "model/tensor_binding.h"
#include "tensor/norms.h"

namespace ember::model {
namespace {

// The calibration that makes a dense model gate-first, checked against the model.
sparse::SparsityCalibration read_calibration(const gguf::File& file, const ModelParams& params, const HParams& hp) {
    const std::string path = params.sparsity_file.empty() ? sparse::default_sparsity_path(file.path()) : params.sparsity_file;
    std::error_code ec;
    if (!std::filesystem::exists(utf8_path(path), ec))
        fail(file.path() + ": activation sparsity needs the model's calibration, and " + path +
             " does not exist: make it with ember-calibrate -m MODEL -f TEXT");
    sparse::SparsityCalibration c = sparse::read_sparsity_file(path, hp.n_layer, hp.n_ff, file.file_size());
    if (c.activation != ffn_gate_name(hp.ffn_gate))
        fail(path + ": calibrated for the FFN activation '" + c.activation + "', the model runs '" +
             ffn_gate_name(hp.ffn_gate) + "'");
    return c;
}

// Every layer's down projection has a transposed layout (activation sparsity reads its columns).
bool downs_transposable(const gguf::File& file, const HParams& hp) {
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        const gguf::TensorInfo* t = file.find_tensor("blk." + std::to_string(il) + ".ffn_down.weight");
        const std::optional<tensor::DType> type = t ? tensor::dtype_from_ggml(t->type) : std::nullopt;
        if (!type || !transposed_type(*type, hp.n_ff, hp.n_embd)) return false;
    }
    return true;
}

struct LlamaLayer {
    const float* attn_norm;     // [n_embd]
    tensor::WeightView wq;      // [n_embd] -> [n_embd_q], rows permuted for adjacent-pair RoPE
    tensor::WeightView wk;      // [n_embd] -> [n_embd_gqa], likewise
    tensor::WeightView wv;      // [n_embd] -> [n_embd_gqa]
    tensor::WeightView wo;      // [n_embd_q] -> [n_embd]
    // With HParams::sparse_attn_input the four are laid out by input (a row per input), and a
    // fused QKV tensor is wq alone, wk and wv empty.
    const float* ffn_norm;      // [n_embd]
    tensor::WeightView gate;    // [n_embd] -> [n_ff]
    tensor::WeightView gate_t;  // the gate laid out by input (HParams::sparse_ffn_input), in place of gate
    tensor::WeightView up;      // [n_embd] -> [n_ff]
    tensor::WeightView down;    // [n_ff] -> [n_embd] (dense files)
    std::array<const float*, 3> bias{};     // Q, K, V biases (Qwen 2)
    std::array<const float*, 2> qk_norm{};  // Q's and K's per-head RMSNorm weights (Qwen 3)
    SparseFfnWeights sparse;    // gate, up, down_t, fc1, fc2 (PowerInfer files)
    MoeLayer moe;               // router and experts instead of gate, up and down (mixtures of experts)
};

class LlamaFamily final : public Architecture {
public:
    LlamaFamily(const gguf::File& file, const ModelParams& params, HParams hp) {
        hp_ = std::move(hp);
        const int64_t n_embd = hp_.n_embd, n_q = hp_.n_embd_q(), n_ff = hp_.n_ff, n_gqa = hp_.n_embd_gqa(), n_vocab = hp_.n_vocab;

        TensorBinder bind(file);
        uint64_t ffn_bytes = 0, predictor_bytes = 0, expert_bytes = 0, attention_by_input_bytes = 0;
        token_embd_ = bind.stored_matrix("token_embd.weight", n_embd, n_vocab);
        output_norm_ = bind.vector("output_norm.weight", n_embd);
        // Files with a tied LM head have no output.weight. A sparse LM head reads single rows.
        const bool sparse_head = params.sparse_lm_head && file.find_tensor("lm_head_profiler.weight");
        if (!file.find_tensor("output.weight"))
            output_ = token_embd_;
        else
            output_ = sparse_head ? bind.matrix("output.weight", n_embd, n_vocab)
                                  : bind.product_matrix("output.weight", n_embd, n_vocab);
        if (sparse_head) {
            const auto [to_rank, to_vocab] = bind.stacked_matrices("lm_head_profiler.weight", n_embd, n_vocab);
            profiler_ = LmHeadProfiler{to_rank, to_vocab};
        }
        if (file.find_tensor("rope_freqs.weight")) hp_.rope_freq_factors = bind.vector("rope_freqs.weight", hp_.head_dim() / 2);
        if (file.find_tensor("rope_factors_long.weight")) {
            hp_.rope_freq_factors = bind.vector("rope_factors_short.weight", hp_.head_dim() / 2);
            hp_.rope_freq_factors_long = bind.vector("rope_factors_long.weight", hp_.head_dim() / 2);
        }
        const bool fused_qkv = file.find_tensor("blk.0.attn_qkv.weight") != nullptr;
        const bool sparse = is_powerinfer_layout(file);
        const bool gated = hp_.ffn_gate == FfnGate::SiluPar || hp_.ffn_gate == FfnGate::ReluPar;
        const bool dense_gated = !sparse && !hp_.moe() && gated;
        hp_.gate_first_possible = dense_gated && downs_transposable(file, hp_);
        if (dense_gated && params.activation_sparsity > 0.0f && params.sparse_ffn_input) {
            if (hp_.fused_gate_up)
                fail(file.path() + ": FFN input sparsity (--sparse-ffn-input) lays out the gate by input, and this "
                     "file's gate and up projections are one tensor (ffn_up); run it without");
            // A prompt's kept inputs wait where its activations will be.
            if (hp_.n_embd > hp_.n_ff)
                fail(file.path() + ": FFN input sparsity (--sparse-ffn-input) needs at least as many FFN neurons (" +
                     std::to_string(hp_.n_ff) + ") as inputs (" + std::to_string(hp_.n_embd) + "); run it without");
        }
        // Asked of a file whose down projections have no column layout, binding them names the type.
        std::optional<sparse::SparsityCalibration> calibration =
            dense_gated && params.activation_sparsity > 0.0f
                ? std::optional(read_calibration(file, params, hp_))
                : std::nullopt;
        hp_.gate_first = calibration.has_value();
        hp_.activation_sparsity = hp_.gate_first ? params.activation_sparsity : 0.0f;
        hp_.sparse_ffn_input = hp_.gate_first && params.sparse_ffn_input;
        hp_.sparse_attn_input = hp_.gate_first && params.sparse_attn_input;
        // Phi 3's one QKV product by input has one output for the three.
        hp_.fused_qkv = hp_.fused_qkv || (hp_.sparse_attn_input && fused_qkv);
        // hp_.sparse() is not known yet: the predictors' rank is read layer by layer below.
        const bool sparse_ffn = sparse || hp_.gate_first;
        // The sparse FFN reads single gate and up rows; a dense one only whole matrices.
        const auto ffn_matrix = [&](const std::string& name, int64_t n_rows, std::initializer_list<int64_t> parts) {
            return sparse_ffn ? bind.matrix(name, n_embd, n_rows) : bind.product_matrix(name, n_embd, n_rows, parts);
        };
        if (sparse) hp_.sparse_threshold = resolve_sparse_threshold(file, params.sparse_threshold);
        layers_.reserve(size_t(hp_.n_layer));
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const std::string p = "blk." + std::to_string(il) + ".";
            LlamaLayer L{};
            L.attn_norm = bind.vector(p + "attn_norm.weight", n_embd);
            if (hp_.sparse_attn_input) {  // by input: a product reads only its kept inputs' rows
                if (fused_qkv)  // one product for the three: Q's outputs, then K's, then V's
                    L.wq = bind.transposed_matrix(p + "attn_qkv.weight", n_embd, n_q + 2 * n_gqa);
                else {
                    L.wq = bind.transposed_matrix(p + "attn_q.weight", n_embd, n_q);
                    L.wk = bind.transposed_matrix(p + "attn_k.weight", n_embd, n_gqa);
                    L.wv = bind.transposed_matrix(p + "attn_v.weight", n_embd, n_gqa);
                }
            } else if (fused_qkv) {  // Phi 3: Q's rows, then K's, then V's
                const tensor::WeightView qkv = bind.product_matrix(p + "attn_qkv.weight", n_embd, n_q + 2 * n_gqa, {n_q, n_gqa});
                L.wq = qkv.rows(0, n_q);
                L.wk = qkv.rows(n_q, n_gqa);
                L.wv = qkv.rows(n_q + n_gqa, n_gqa);
            } else {
                L.wq = bind.product_matrix(p + "attn_q.weight", n_embd, n_q);
                L.wk = bind.product_matrix(p + "attn_k.weight", n_embd, n_gqa);
                L.wv = bind.product_matrix(p + "attn_v.weight", n_embd, n_gqa);
            }
            L.wo = hp_.sparse_attn_input ? bind.transposed_matrix(p + "attn_output.weight", n_q, n_embd)
                                         : bind.product_matrix(p + "attn_output.weight", n_q, n_embd);
            L.ffn_norm = bind.vector(p + "ffn_norm.weight", n_embd);
            if (hp_.moe()) {
                L.moe = bind_moe_layer(bind, file, p, hp_, params.experts_by_neuron, &expert_bytes);
            } else if (hp_.fused_gate_up) {  // Phi 3: the gate's rows, then the up rows
                const tensor::WeightView gate_up = ffn_matrix(p + "ffn_up.weight", 2 * n_ff, {n_ff});
                L.gate = gate_up.rows(0, n_ff);
                L.up = gate_up.rows(n_ff, n_ff);
            } else {
                // A gate-first FFN reads its gate whole, as a dense one does, or by input.
                if (hp_.sparse_ffn_input)
                    L.gate_t = bind.transposed_matrix(p + "ffn_gate.weight", n_embd, n_ff);
                else
                    L.gate = hp_.gate_first ? bind.product_matrix(p + "ffn_gate.weight", n_embd, n_ff)
                                            : ffn_matrix(p + "ffn_gate.weight", n_ff, {});
                L.up = ffn_matrix(p + "ffn_up.weight", n_ff, {});
            }
            if (hp_.qkv_bias)
                L.bias = {bind.vector(p + "attn_q.bias", n_q), bind.vector(p + "attn_k.bias", n_gqa),
                          bind.vector(p + "attn_v.bias", n_gqa)};
            if (hp_.qk_norm)
                L.qk_norm = {bind.vector(p + "attn_q_norm.weight", hp_.head_dim()),
                             bind.vector(p + "attn_k_norm.weight", hp_.head_dim())};
            if (hp_.moe()) {
                ffn_bytes += matrix_bytes(L.moe.router);
            } else if (sparse) {
                const tensor::WeightView fc1 = bind.matrix_any_rows(p + "fc1.weight", n_embd, n_ff);
                L.sparse = SparseFfnWeights{L.gate, L.up, bind.stored_matrix(p + "ffn_down_t.weight", n_embd, n_ff), fc1,
                                            bind.matrix(p + "fc2.weight", fc1.n_rows, n_ff), {}};
                hp_.max_predictor_rank = std::max(hp_.max_predictor_rank, int32_t(fc1.n_rows));
            } else if (calibration) {
                L.sparse = SparseFfnWeights{L.gate, L.up, bind.transposed_matrix(p + "ffn_down.weight", n_ff, n_embd), {}, {},
                                            L.gate_t};
            } else {
                L.down = bind.product_matrix(p + "ffn_down.weight", n_ff, n_embd);
            }
            if (!hp_.moe())
                ffn_bytes += matrix_bytes(L.gate) + matrix_bytes(L.gate_t) + matrix_bytes(L.up) +
                             matrix_bytes(sparse_ffn ? L.sparse.down_t : L.down);
            if (sparse) predictor_bytes += matrix_bytes(L.sparse.fc1) + matrix_bytes(L.sparse.fc2);
            if (hp_.sparse_attn_input)
                attention_by_input_bytes += matrix_bytes(L.wq) + matrix_bytes(L.wk) + matrix_bytes(L.wv) + matrix_bytes(L.wo);
            layers_.push_back(L);
        }
        if (hp_.moe() && params.expert_memory_bytes) {
            std::vector<MoeFfnWeights> experts;
            for (const LlamaLayer& L : layers_) experts.push_back(L.moe.experts);
            residency_ = keep_experts_in_memory(file, experts, hp_, *params.expert_memory_bytes);
        }
        if (calibration) {
            sparsity_allocation_ = params.sparsity_allocation.value_or(calibration->allocation);
            if (sparsity_allocation_ == SparsityAllocation::Measured && calibration->cost_levels.empty())
                fail(file.path() + ": the measured allocation of activation sparsity needs the layers' costs, and " +
                     (params.sparsity_file.empty() ? sparse::default_sparsity_path(file.path()) : params.sparsity_file) +
                     " has none: calibrate with ember-calibrate --layer-cost-tokens N");
        }
        calibration_ = std::move(calibration);
        // A mixture of experts' token reads n_expert_used experts of each layer's n_expert.
        const uint64_t unread = (hp_.moe() ? expert_bytes / uint64_t(hp_.n_expert) * uint64_t(hp_.n_expert - hp_.n_expert_used) : 0) +
                                (profiler_ ? matrix_bytes(profiler_->to_rank) + matrix_bytes(profiler_->to_vocab) : 0);
        set_totals(bind, token_embd_, output_, ffn_bytes + expert_bytes, predictor_bytes, 3,
                   hp_.moe() ? layers_.front().moe.experts.gate.type : layers_.front().gate.type, unread,
                   attention_by_input_bytes);
        output_norm_bytes_ = uint64_t(n_embd) * sizeof(float);
    }

    backend::FfnRows ffn_rows(int32_t il) const override {
        const LlamaLayer& L = layers_[size_t(il)];
        if (hp_.moe()) return expert_neuron_rows(L.moe.experts, hp_);
        // A gate-first FFN's gate is computed whole on the CPU (it decides which neurons run),
        // so a device holds only the up and down rows.
        return {hp_.gate_first ? tensor::WeightView{} : L.sparse.gate, L.sparse.up, L.sparse.down_t};
    }

    LayerMatrices layer_matrices(int32_t il) const override {
        const LlamaLayer& L = layers_[size_t(il)];
        const uint64_t norm = uint64_t(hp_.n_embd) * sizeof(float);
        LayerMatrices m{{L.wq, L.wk, L.wv, L.wo}, {}, {}, {}, norm, norm};
        // Laid out by input, attention has no matrix a device could take.
        if (hp_.sparse_attn_input) m.attention.clear();
        if (hp_.sparse()) {
            if (hp_.max_predictor_rank > 0) m.predictor = {L.sparse.fc1, L.sparse.fc2};
        } else if (hp_.moe())
            m.experts = expert_matrices(L.moe.experts, hp_);
        else
            m.ffn = {L.gate, L.up, L.down};
        return m;
    }

    const tensor::WeightView& lm_head() const override { return output_; }
    const LmHeadProfiler* lm_head_profiler() const override { return profiler_ ? &*profiler_ : nullptr; }
    const ExpertResidency* expert_residency() const override { return residency_ ? &*residency_ : nullptr; }

    void forward(const int32_t* tokens, int32_t n, KvCache& kv, Executor& ex, float* logits,
                 bool logits_all) const override {
        const int64_t n_embd = hp_.n_embd;
        Scratch& s = ex.scratch();
        embed_tokens(token_embd_, tokens, n, s.x.data());
        ex.begin_batch(kv, n);
        for (int32_t il = 0; il < hp_.n_layer; ++il) {
            const LlamaLayer& L = layers_[size_t(il)];
            if (hp_.moe() && hp_.moe_routes_layer_input) ex.route(il, L.moe.router, L.moe.experts, s.x.data());
            const tensor::WeightView qkv[] = {L.wq, L.wk, L.wv};
            const std::span<const tensor::WeightView> products(qkv, L.wk.n_rows ? 3 : 1);
            ex.attention_sublayer(il, {{L.attn_norm, nullptr, hp_.norm_eps}, products, L.wo, hp_.rope_pairs, true, L.bias, L.qk_norm},
                                  kv,
                                  s.x.data(), s.x.data());
            ex.emit("ffn_inp", il, s.x.data(), n_embd);
            tensor::rms_norm(s.x.data(), L.ffn_norm, s.ffn_in.data(), n_embd, n, hp_.norm_eps);
            ex.emit("ffn_norm", il, s.ffn_in.data(), n_embd);
            if (s.sparse) {  // the predictor reads the residual before ffn_norm (docs/FORMATS.md §3.2)
                ex.sparse_ffn(il, L.sparse, s.x.data(), s.ffn_in.data(), s.ffn_out.data());
            } else if (hp_.moe()) {
                if (!hp_.moe_routes_layer_input) ex.route(il, L.moe.router, L.moe.experts, s.ffn_in.data());
                ex.moe_ffn(il, L.moe.experts, s.ffn_in.data(), s.ffn_out.data());
            } else {
                ex.dense_ffn(il, {L.gate, L.up, L.down}, s.ffn_in.data(), s.ffn_out.data());
            }
            ex.emit("ffn_out", il, s.ffn_out.data(), n_embd);
            add_in_place(s.x.data(), s.ffn_out.data(), n * n_embd);
            ex.emit("l_out", il, s.x.data(), n_embd);
        }
        kv.commit(n);
        // Output head, for the last token or all of them.
        const int32_t first = logits_all ? 0 : n - 1;
        const int32_t count = n - first;
        tensor::rms_norm(s.x.data() + size_t(first) * n_embd, output_norm_, s.out_norm.data(), n_embd, count, hp_.norm_eps);
        ex.emit("result_norm", -1, s.out_norm.data(), n_embd, first, count);
        ex.lm_head(output_, s.out_norm.data(), count, logits);
    }

private:
    tensor::WeightView token_embd_;  // [n_embd] x n_vocab rows
    const float* output_norm_ = nullptr;
    tensor::WeightView output_;      // [n_embd] -> [n_vocab]
    std::optional<LmHeadProfiler> profiler_;
    std::vector<LlamaLayer> layers_;
    std::optional<ExpertResidency> residency_;
};

}  // namespace

std::unique_ptr<Architecture> load_llama_family(const gguf::File& file, const ModelParams& params, HParams hp) {
    return std::make_unique<LlamaFamily>(file, params, std::move(hp));
}

}  // namespace ember::model

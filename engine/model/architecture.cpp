#include "model/architecture.h"

#include <array>
#include <cmath>
#include <string_view>

#include "common/error.h"
#include "sparse/layer_allocation.h"

namespace ember::model {
namespace {

struct Entry {
    std::string_view name;
    std::unique_ptr<Architecture> (*load)(const gguf::File&, const ModelParams&);
};

constexpr std::array<Entry, 10> kArchitectures{{
    {"llama", load_llama},
    {"qwen2", load_qwen2},
    {"qwen3", load_qwen3},
    {"qwen3moe", load_qwen3moe},
    {"phi3", load_phi3},
    {"gemma2", load_gemma2},
    {"gemma3", load_gemma3},
    {"bamboo", load_bamboo},
    {"falcon", load_falcon},
    {"smallthinker", load_smallthinker},
}};

}  // namespace

void Architecture::set_totals(const TensorBinder& bind, const tensor::WeightView& token_embd,
                              const tensor::WeightView& output, uint64_t ffn_bytes, uint64_t predictor_bytes,
                              int32_t ffn_matrices, tensor::DType weight_type, uint64_t unread_bytes,
                              uint64_t attention_by_input_bytes) {
    totals_.weight_bytes = bind.bytes_bound();
    totals_.n_params = bind.params_bound();
    totals_.bytes_per_token =
        totals_.weight_bytes - unread_bytes -
        (output.data == token_embd.data ? 0 : uint64_t(token_embd.row_bytes) * uint64_t(token_embd.n_rows - 1));
    totals_.ffn_bytes = ffn_bytes;
    totals_.predictor_bytes = predictor_bytes;
    totals_.attention_by_input_bytes = attention_by_input_bytes;
    totals_.ffn_matrices = ffn_matrices;
    totals_.weight_type = tensor::dtype_name(tensor::stored_type(weight_type));
}

std::vector<float> Architecture::layer_levels(float level) const {
    if (!calibration_) return {};
    return sparse::layer_levels(*calibration_, level, sparsity_allocation_);
}

std::vector<std::vector<double>> Architecture::calibrated_firing(const std::vector<float>& levels) const {
    std::vector<std::vector<double>> out;
    if (!calibration_) return out;
    for (int32_t il = 0; il < hp_.n_layer; ++il) {
        const std::vector<float>& firing = sparse::firing_at(*calibration_, il, levels[size_t(il)]);
        out.emplace_back(firing.begin(), firing.end());
    }
    return out;
}

std::vector<float> Architecture::gate_thresholds(const std::vector<float>& levels) const {
    std::vector<float> out;
    if (!calibration_) return out;
    for (int32_t il = 0; il < hp_.n_layer; ++il)
        out.push_back(sparse::threshold_at(*calibration_, il, sparse::SparsitySite::FfnAct, levels[size_t(il)]));
    return out;
}

InputSparsity Architecture::input_sparsity(const std::vector<float>& levels) const {
    InputSparsity out;
    if (!calibration_) return out;
    const auto threshold = [&](int32_t il, sparse::SparsitySite site) {
        return sparse::threshold_at(*calibration_, il, site, levels[size_t(il)]);
    };
    for (int32_t il = 0; il < hp_.n_layer; ++il) {
        if (hp_.sparse_ffn_input) {
            out.ffn_in.push_back(threshold(il, sparse::SparsitySite::FfnIn));
            out.neurons_kept.push_back(int32_t(std::lround((1.0 - double(levels[size_t(il)])) * double(hp_.n_ff))));
        }
        if (hp_.sparse_attn_input) {
            out.attn_in.push_back(threshold(il, sparse::SparsitySite::AttnIn));
            out.attn_out.push_back(threshold(il, sparse::SparsitySite::AttnOut));
        }
    }
    return out;
}

sparse::PlacementCosts Architecture::placement_costs(int32_t n_ctx) const {
    const auto sum = [](const std::vector<tensor::WeightView>& ms) {
        uint64_t bytes = 0;
        for (const tensor::WeightView& w : ms) bytes += matrix_bytes(w);
        return bytes;
    };
    sparse::PlacementCosts c;
    for (int32_t il = 0; il < hp_.n_layer; ++il) {
        const LayerMatrices m = layer_matrices(il);
        c.attn_bytes.push_back(m.attn_norm_bytes + sum(m.attention));
        c.predictor_bytes.push_back(sum(m.predictor));
        c.ffn_norm_bytes.push_back(m.ffn_norm_bytes);
        c.dense_ffn_bytes.push_back(sum(m.ffn));
        c.neuron_bytes.push_back(sparse() ? backend::neuron_bytes(ffn_rows(il)) : 0);
        c.n_ff.push_back(hp_.n_ff);
    }
    c.output_bytes = matrix_bytes(lm_head()) + output_norm_bytes_;
    c.kv_k_bytes = c.kv_v_bytes = kv_cache_half_bytes(hp_, n_ctx);
    return c;
}

bool architecture_supported(std::string_view name) {
    for (const auto& e : kArchitectures)
        if (e.name == name) return true;
    return false;
}

std::unique_ptr<Architecture> load_architecture(const gguf::File& file, const ModelParams& params) {
    auto arch = file.get_string("general.architecture");
    if (!arch) fail(file.path() + ": missing metadata key 'general.architecture'");
    if (!(params.activation_sparsity >= 0.0f && params.activation_sparsity <= 0.95f))
        fail(file.path() + ": activation sparsity " + std::to_string(params.activation_sparsity) +
             " is outside 0 (off) to 0.95");
    for (const auto& e : kArchitectures) {
        if (e.name != *arch) continue;
        std::unique_ptr<Architecture> a = e.load(file, params);
        if (params.activation_sparsity > 0.0f && !a->hparams().gate_first)
            fail(file.path() + ": activation sparsity needs a dense llama-family model (llama, qwen2, qwen3, phi3) "
                 "with a gated FFN; this one is " + *arch + (a->sparse() ? ", sparse already" : "") +
                 (a->hparams().moe() ? ", a mixture of experts" : ""));
        return a;
    }
    std::string known;
    for (const auto& e : kArchitectures) known += (known.empty() ? "" : ", ") + std::string(e.name);
    fail(file.path() + ": general.architecture '" + *arch + "' is not supported (supported: " + known + ")");
}

}  // namespace ember::model

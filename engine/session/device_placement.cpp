#include "session/device_placement.h"

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "common/utf8_path.h"
#include "sparse/activation_file.h"
#include "sparse/gpu_index.h"

namespace ember {
namespace {

// table[il][j], or 0 where the table has no such entry (no profile, no use yet).
template <typename T>
double entry(const std::vector<std::vector<T>>& table, int32_t il, int32_t j) {
    return size_t(il) < table.size() && size_t(j) < table[size_t(il)].size() ? double(table[size_t(il)][size_t(j)]) : 0.0;
}

// How many tokens' worth of use a profile counts for beside a session's own.
constexpr double kProfileTokens = 1024.0;

}  // namespace

DevicePlacement::DevicePlacement(std::unique_ptr<backend::Device> device, const model::Architecture& arch,
                                 const std::string& model_path, int32_t n_ctx, uint64_t margin_bytes,
                                 const std::string& gpu_index_path, bool reset_gpu_index, bool disable_gpu_index,
                                 const std::vector<float>& layer_levels)
    : device_(std::move(device)), arch_(arch), model_path_(model_path),
      gpu_index_path_(gpu_index_path.empty() ? sparse::gpu_index_path(model_path) : gpu_index_path),
      reset_gpu_index_(reset_gpu_index),
      disable_gpu_index_(disable_gpu_index), n_ctx_(n_ctx), margin_bytes_(margin_bytes),
      hot_(size_t(arch.hparams().n_layer)) {
    if (arch.hparams().n_expert > 0) read_expert_profile();
    if (!arch.sparse()) return;  // dense models place whole layers; no statistics to read
    if (disable_gpu_index) {
        activation_note_ = "GPU index disabled: FFN on the CPU only";
        return;
    }
    const auto dir = utf8_string(utf8_path(model_path).parent_path() / "activation");
    try {
        // A gate-first model's hot neurons are those its calibration saw firing most.
        activation_ = arch.hparams().gate_first ? arch.calibrated_firing(layer_levels)
                                               : sparse::read_activation_dir(dir, arch.hparams().n_layer, arch.hparams().n_ff);
    } catch (const EngineError& e) {
        activation_note_ = std::string("no usable activation statistics (") + e.what() + "): FFN on the CPU only";
        return;
    }
    // What an index must have been made from to be reused; only the budget varies per plan.
    sparse::stamp_model_file(model_path_, index_source_);
    index_source_.activation_hash = sparse::hash_activation(activation_);
}

void DevicePlacement::read_expert_profile() {
    const model::HParams& hp = arch_.hparams();
    const std::string path = sparse::default_expert_profile_path(model_path_);
    std::error_code ec;
    if (!std::filesystem::exists(utf8_path(path), ec)) {
        expert_profile_note_ = "no expert profile (" + path + "): experts placed by this session's use";
        return;
    }
    try {
        const uint64_t model_bytes = std::filesystem::file_size(utf8_path(model_path_));
        const sparse::ExpertProfile p =
            sparse::read_expert_profile(path, hp.n_layer, hp.n_expert, hp.n_expert_used, hp.n_ff, model_bytes);
        expert_share_ = p.share;
        neuron_fire_ = p.fire;
        expert_profile_note_ = "experts ordered by " + path + " (" + std::to_string(p.n_tokens) + " tokens profiled)";
    } catch (const std::exception& e) {
        // A stale or broken profile costs the order, not the load.
        expert_profile_note_ = std::string("expert profile not used: ") + e.what();
    }
}

std::shared_ptr<const model::ExecutionPlan> DevicePlacement::plan(uint64_t budget, model::KvCache& kv) {
    sparse::PlacementCosts costs = arch_.placement_costs(n_ctx_);
    costs.margin_bytes = margin_bytes_;
    const sparse::Placement p =
        arch_.sparse() ? sparse::plan_placement(costs, budget) : sparse::plan_layer_offload(costs, budget);
    placement_note_ = p.explanation;
    const int32_t n_layer = arch_.hparams().n_layer;
    DenseShare dense = dense_share(p, kv);
    const std::vector<std::vector<int32_t>> next = arch_.sparse() ? choose_hot(p) : dense.expert_neurons;

    // The device's memory for this plan is exactly what it will hold.
    uint64_t footprint = dense.bytes + dense.kv.bytes();
    for (int32_t il = 0; il < n_layer; ++il)
        footprint += backend::neuron_bytes(arch_.ffn_rows(il)) * next[size_t(il)].size();

    // Grow the budget and the memory held first, then shrink layers, replace the dense share,
    // grow layers, and only then shrink the memory and the budget: the device stays within the
    // larger of the two plans at every step and within the new one at the end.
    const uint64_t held = device_->footprint();
    device_->set_budget_bytes(std::max(budget, held));
    device_->set_footprint(std::max(footprint, held));
    for (int32_t il = 0; il < n_layer; ++il)
        if (next[size_t(il)].size() < hot_[size_t(il)].size())
            device_->set_hot_neurons(il, arch_.ffn_rows(il), next[size_t(il)]);
    place_dense(p, dense, kv);
    for (int32_t il = 0; il < n_layer; ++il)
        if (next[size_t(il)].size() >= hot_[size_t(il)].size())
            device_->set_hot_neurons(il, arch_.ffn_rows(il), next[size_t(il)]);
    hot_ = next;
    device_->set_footprint(device_->used_bytes());
    device_->set_budget_bytes(budget);

    auto plan = std::make_shared<model::ExecutionPlan>(std::move(dense.plan));
    for (int32_t il = 0; il < n_layer; ++il) {
        model::LayerPlan& layer = plan->layers[size_t(il)];
        const std::vector<int32_t>& ids = hot_[size_t(il)];
        if (ids.empty()) continue;
        layer.hot.assign(size_t(arch_.ffn_rows(il).up.n_rows), 0);
        for (int32_t id : ids) layer.hot[size_t(id)] = 1;
        layer.n_hot = int64_t(ids.size());
    }
    plan_ = plan;
    return plan;
}

DevicePlacement::DenseShare DevicePlacement::dense_share(const sparse::Placement& p, const model::KvCache& kv) const {
    // A part with a matrix of a type the device has no kernel for (e.g. a Q6_K LM head) stays on
    // the CPU, uncharged.
    DenseShare d;
    d.plan = model::ExecutionPlan::cpu(arch_.hparams().n_layer);
    uint64_t placed_bytes = 0, refused_bytes = 0;
    const auto place = [&](const std::vector<tensor::WeightView>& part) {
        if (part.empty()) return model::Where::Cpu;  // e.g. a mixture of experts' FFN, which the CPU runs
        uint64_t bytes = 0;
        bool supported = true;
        for (const tensor::WeightView& w : part) {
            bytes += model::matrix_bytes(w);
            supported = supported && device_->supports(w.type);
        }
        if (!supported) {
            ++d.refused;
            refused_bytes += bytes;
            return model::Where::Cpu;
        }
        d.matrices.insert(d.matrices.end(), part.begin(), part.end());
        placed_bytes += bytes;
        return model::Where::Device;
    };
    // The KV cache of a layer is only held where its whole attention sub-layer runs.
    int32_t n_kv = p.n_kv_layers;
    std::vector<model::LayerMatrices> layers;
    for (int32_t il = 0; il < arch_.hparams().n_layer; ++il) {
        const model::LayerMatrices& m = layers.emplace_back(arch_.layer_matrices(il));
        model::LayerPlan& layer = d.plan.layers[size_t(il)];
        if (il < p.n_attn_layers && place(m.attention) == model::Where::Device)
            layer.attention = model::AttentionOn::DeviceProducts;
        else
            n_kv = std::min(n_kv, il);
        if (il < p.n_predictor_layers) layer.predictor = place(m.predictor);
        if (il < p.n_ffn_layers) layer.ffn = place(m.ffn);
    }
    if (p.output_on_device) d.plan.lm_head = place({arch_.lm_head()});
    const model::HParams& hp = arch_.hparams();
    if (!hp.device_attention_sublayer()) n_kv = 0;
    if (n_kv > 0) {
        d.kv = {n_kv, kv.n_ctx(), hp.n_head, hp.n_head_kv, hp.head_dim()};
        for (int32_t il = 0; il < n_kv; ++il) d.plan.layers[size_t(il)].attention = model::AttentionOn::DeviceSublayer;
    }
    d.other_bytes = p.bytes_used - p.ffn_bytes - placed_bytes - refused_bytes - p.kv_bytes;
    // A mixture of experts: once every dense part fits, whole experts in the rest of the budget,
    // the most used first: the tokens this session routed to each, plus what the profile expects
    // of kProfileTokens tokens, so that a profile orders a fresh session and the session's own
    // use takes over as it grows. Without either, layer by layer. Gate-first experts in
    // PowerInfer's layout go neuron by neuron instead.
    d.expert_neurons.resize(size_t(hp.n_layer));
    if (p.output_on_device && p.n_attn_layers == hp.n_layer) {
        struct Expert {
            int32_t il;
            int32_t e;
            double uses;
        };
        std::vector<Expert> order;
        for (int32_t il = 0; il < hp.n_layer; ++il)
            for (int32_t e = 0; e < int32_t(layers[size_t(il)].experts.size()); ++e)
                order.push_back({il, e, entry(expert_uses_, il, e) + kProfileTokens * entry(expert_share_, il, e)});
        std::stable_sort(order.begin(), order.end(), [](const Expert& a, const Expert& b) { return a.uses > b.uses; });
        uint64_t left = p.budget_bytes - p.bytes_used;
        for (const Expert& x : order) {
            const std::vector<tensor::WeightView>& matrices = layers[size_t(x.il)].experts[size_t(x.e)];
            uint64_t bytes = 0;
            for (const tensor::WeightView& w : matrices) bytes += model::matrix_bytes(w);
            if (bytes > left || place(matrices) == model::Where::Cpu) continue;
            left -= bytes;
            std::vector<uint8_t>& on = d.plan.layers[size_t(x.il)].experts;
            if (on.empty()) on.assign(layers[size_t(x.il)].experts.size(), 0);
            on[size_t(x.e)] = 1;
        }
        if (hp.moe()) d.expert_neurons = choose_expert_neurons(left);
    }
    d.bytes = placed_bytes + d.other_bytes;
    return d;
}

void DevicePlacement::place_dense(const sparse::Placement& p, const DenseShare& d, model::KvCache& kv) {
    // The cache leaves before and arrives after the matrices change, so the device never holds
    // more than the larger of the two plans.
    if (d.kv.n_layer == 0) device_->set_kv_cache(d.kv, kv.k(0, 0), kv.v(0, 0), kv.n_past());
    device_->set_dense(d.matrices, d.other_bytes);
    if (d.kv.n_layer > 0) device_->set_kv_cache(d.kv, kv.k(0, 0), kv.v(0, 0), kv.n_past());

    const std::string n_layer = std::to_string(arch_.hparams().n_layer);
    const std::string kv_note = d.kv.n_layer == 0                    ? ""
                                : d.kv.n_layer == arch_.hparams().n_layer ? ", the KV cache"
                                : ", the KV cache of " + std::to_string(d.kv.n_layer) + "/" + n_layer + " layers";
    dense_note_ = arch_.sparse() ? "attention of " + std::to_string(p.n_attn_layers) + "/" + n_layer +
                                       " layers, predictors of " + std::to_string(p.n_predictor_layers) + "/" + n_layer
                                 : std::to_string(p.n_attn_layers) + "/" + n_layer + " layers";
    dense_note_ += (p.output_on_device ? ", the LM head" : "") + kv_note + " on the device";
    if (d.refused > 0)
        dense_note_ += "; " + std::to_string(d.refused) + " parts with matrices of types it has no kernel for stay on the CPU";
}

std::vector<std::vector<int32_t>> DevicePlacement::choose_expert_neurons(uint64_t left) const {
    // A neuron's expected fires: this session's, plus kProfileTokens tokens' worth of the profile's
    // share of tokens routed to its expert times its firing rate there (every time, without one).
    const model::HParams& hp = arch_.hparams();
    struct Neuron {
        int32_t il;
        int32_t id;
        double fires;
    };
    std::vector<Neuron> order;
    std::vector<uint64_t> bytes(size_t(hp.n_layer), 0);
    for (int32_t il = 0; il < hp.n_layer; ++il) {
        const backend::FfnRows rows = arch_.ffn_rows(il);
        if (rows.up.n_rows == 0 || !device_->supports(rows.up.type) || !device_->supports(rows.down_t.type)) continue;
        bytes[size_t(il)] = backend::neuron_bytes(rows);
        for (int32_t id = 0; id < int32_t(rows.up.n_rows); ++id) {
            const double rate = neuron_fire_.empty() ? 1.0 : entry(neuron_fire_, il, id);
            order.push_back({il, id, entry(neuron_fires_, il, id) + kProfileTokens * entry(expert_share_, il, id / hp.n_ff) * rate});
        }
    }
    std::stable_sort(order.begin(), order.end(), [](const Neuron& a, const Neuron& b) { return a.fires > b.fires; });
    std::vector<std::vector<int32_t>> chosen(size_t(hp.n_layer));
    for (const Neuron& x : order) {
        if (bytes[size_t(x.il)] > left) continue;
        left -= bytes[size_t(x.il)];
        chosen[size_t(x.il)].push_back(x.id);
    }
    for (std::vector<int32_t>& ids : chosen) std::sort(ids.begin(), ids.end());
    return chosen;
}

std::vector<std::vector<int32_t>> DevicePlacement::choose_hot(const sparse::Placement& p) {
    const int32_t n_layer = arch_.hparams().n_layer;
    const int64_t n_ff = arch_.hparams().n_ff;
    if (activation_.empty()) return std::vector<std::vector<int32_t>>(size_t(n_layer));

    sparse::GpuIndexSource source = index_source_;
    source.vram_capacity = p.ffn_budget_bytes;
    source.capacity_neurons = p.ffn_capacity_neurons;
    const std::string stamp = sparse::format_gpu_index_source(source);
    const std::string& path = gpu_index_path_;
    sparse::GpuIndexReuse existing = sparse::check_gpu_index(path, n_layer, n_ff, stamp, reset_gpu_index_);
    reset_gpu_index_ = false;  // a reset applies to the index found at load, not to later re-plans
    if (existing.reuse && existing.index) {
        gpu_index_note_ = "reused " + path;
        return existing.index->hot;
    }
    std::vector<int64_t> counts(size_t(n_layer), 0);
    if (p.ffn_capacity_neurons > 0) counts = sparse::solve_hot_counts(activation_, p.ffn_capacity_neurons);
    std::vector<std::vector<int32_t>> hot = sparse::hot_neurons(activation_, counts);
    try {
        sparse::write_gpu_index(path, sparse::GpuIndex{n_ff, p.ffn_budget_bytes, hot, stamp});
        gpu_index_note_ = "wrote " + path + " (" + existing.reason + ")";
    } catch (const EngineError& e) {
        // A read-only model folder only costs the cache.
        gpu_index_note_ = std::string("could not cache the GPU index: ") + e.what();
    }
    return hot;
}

std::vector<std::vector<int32_t>> DevicePlacement::hot() const {
    if (arch_.sparse()) return hot_;
    std::vector<std::vector<int32_t>> layers(hot_.size());
    const int32_t n_ff = arch_.hparams().n_ff;
    for (size_t il = 0; il < layers.size() && plan_; ++il) {
        const model::LayerPlan& layer = plan_->layers[il];
        if (layer.ffn == model::Where::Device)
            for (int32_t i = 0; i < n_ff; ++i) layers[il].push_back(i);
        // Expert e's neurons are e·n_ff.. of the layer's.
        for (size_t e = 0; e < layer.experts.size(); ++e)
            for (int32_t i = 0; i < n_ff && layer.experts[e]; ++i) layers[il].push_back(int32_t(e) * n_ff + i);
        layers[il].insert(layers[il].end(), hot_[il].begin(), hot_[il].end());
    }
    return layers;
}

DeviceReport DevicePlacement::report() const {
    DeviceReport r;
    r.device = device_->name();
    r.budget_bytes = device_->budget_bytes();
    const backend::DeviceUsage usage = device_->usage();
    r.used_bytes = usage.total();
    r.dense_bytes = usage.dense;
    r.kv_bytes = usage.kv;
    r.ffn_bytes = usage.ffn;
    const backend::DeviceTraffic traffic = device_->traffic();
    r.bytes_uploaded = traffic.bytes_uploaded;
    r.dense_bytes_uploaded = traffic.dense_bytes_uploaded;
    r.dense_products = traffic.matmuls;
    r.attention_layers = traffic.attentions;
    r.attention_sublayers = traffic.attention_sublayers;
    r.predictors = traffic.predictors;
    r.round_trips = traffic.joins;
    // Counted from the plan, without listing a dense layer's every neuron id.
    for (const model::LayerPlan& layer : plan_ ? plan_->layers : std::vector<model::LayerPlan>{})
        r.hot_neurons += layer.ffn == model::Where::Device
                             ? arch_.hparams().n_ff
                             : layer.n_hot + std::count(layer.experts.begin(), layer.experts.end(), 1) * arch_.hparams().n_ff;
    r.note = activation_note_.empty() ? placement_note_ : activation_note_;
    r.gpu_index = gpu_index_note_;
    r.dense = dense_note_;
    r.expert_profile = expert_profile_note_;
    return r;
}

}  // namespace ember

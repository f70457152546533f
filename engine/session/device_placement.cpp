#include "session/device_placement.h"

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "common/utf8_path.h"
#include "sparse/activation_file.h"
#include "sparse/gpu_index.h"

namespace ember {

DevicePlacement::DevicePlacement(std::unique_ptr<backend::Device> device, const model::Architecture& arch,
                                 const std::string& model_path, int32_t n_ctx, uint64_t scratch_bytes,
                                 bool reset_gpu_index, bool disable_gpu_index)
    : device_(std::move(device)), arch_(arch), model_path_(model_path), reset_gpu_index_(reset_gpu_index),
      disable_gpu_index_(disable_gpu_index), n_ctx_(n_ctx), scratch_bytes_(scratch_bytes),
      hot_(size_t(arch.hparams().n_layer)) {
    if (disable_gpu_index) {
        activation_note_ = "GPU index disabled: FFN on the CPU only";
        return;
    }
    const auto dir = utf8_string(utf8_path(model_path).parent_path() / "activation");
    try {
        activation_ = sparse::read_activation_dir(dir, arch.hparams().n_layer, arch.hparams().n_ff);
    } catch (const EngineError& e) {
        activation_note_ = std::string("no usable activation statistics (") + e.what() + "): FFN on the CPU only";
        return;
    }
    // What an index must have been made from to be reused; only the budget varies per plan.
    sparse::stamp_model_file(model_path_, index_source_);
    index_source_.activation_hash = sparse::hash_activation(activation_);
}

void DevicePlacement::plan(uint64_t budget, model::SparseScratch& ss, model::KvCache& kv) {
    sparse::PlacementCosts costs = arch_.placement_costs(n_ctx_);
    costs.margin_bytes = scratch_bytes_;
    const sparse::Placement p = sparse::plan_placement(costs, budget);
    placement_note_ = p.explanation;
    const int32_t n_layer = arch_.hparams().n_layer;
    const std::vector<std::vector<int32_t>> next = choose_hot(p);

    const DenseShare dense = dense_share(p, kv);
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

    ss.device = device_.get();
    ss.hot.assign(size_t(n_layer), std::vector<uint8_t>(size_t(arch_.hparams().n_ff), 0));
    for (int32_t il = 0; il < n_layer; ++il)
        for (int32_t id : hot_[size_t(il)]) ss.hot[size_t(il)][size_t(id)] = 1;
}

DevicePlacement::DenseShare DevicePlacement::dense_share(const sparse::Placement& p, const model::KvCache& kv) const {
    // A type the device has no kernel for (e.g. a Q6_K LM head) stays on the CPU, uncharged.
    DenseShare d;
    uint64_t placed_bytes = 0, refused_bytes = 0;
    for (const tensor::WeightView& w : arch_.device_matrices(p)) {
        if (device_->supports(w.type)) {
            d.matrices.push_back(w);
            placed_bytes += model::matrix_bytes(w);
        } else {
            ++d.refused;
            refused_bytes += model::matrix_bytes(w);
        }
    }
    const model::HParams& hp = arch_.hparams();
    if (p.kv_k_on_device && p.kv_v_on_device) d.kv = {hp.n_layer, kv.n_ctx(), hp.n_head, hp.n_head_kv, hp.head_dim()};
    d.other_bytes = p.bytes_used - p.ffn_bytes - placed_bytes - refused_bytes - d.kv.bytes();
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
    dense_note_ = "attention of " + std::to_string(p.n_attn_layers) + "/" + n_layer + " layers, predictors of " +
                  std::to_string(p.n_predictor_layers) + "/" + n_layer + (p.output_on_device ? ", the LM head" : "") +
                  (d.kv.n_layer > 0 ? ", the KV cache" : "") + " on the device";
    if (d.refused > 0)
        dense_note_ += "; " + std::to_string(d.refused) + " matrices of types it has no kernel for stay on the CPU";
}

std::vector<std::vector<int32_t>> DevicePlacement::choose_hot(const sparse::Placement& p) {
    const int32_t n_layer = arch_.hparams().n_layer;
    const int64_t n_ff = arch_.hparams().n_ff;
    if (activation_.empty()) return std::vector<std::vector<int32_t>>(size_t(n_layer));

    sparse::GpuIndexSource source = index_source_;
    source.vram_capacity = p.ffn_budget_bytes;
    source.capacity_neurons = p.ffn_capacity_neurons;
    const std::string stamp = sparse::format_gpu_index_source(source);
    const std::string path = sparse::gpu_index_path(model_path_);
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
    for (const auto& layer : hot_) r.hot_neurons += int64_t(layer.size());
    r.note = activation_note_.empty() ? placement_note_ : activation_note_;
    r.gpu_index = gpu_index_note_;
    r.dense = dense_note_;
    return r;
}

}  // namespace ember

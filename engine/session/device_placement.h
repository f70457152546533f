#pragma once
// A session's device and what it holds: for a byte budget, the dense parts, the KV cache and —
// for sparse models — the hottest FFN neurons by the model's activation statistics; for dense
// models whole layers from the first on; for a mixture of experts the experts used most, whole,
// or neuron by neuron in PowerInfer's layout. Each plan() yields the execution plan the forward
// pass follows, and re-plans without reloading when the budget changes.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/device.h"
#include "ember/session.h"
#include "model/architecture.h"
#include "model/kv_cache.h"
#include "model/execution_plan.h"
#include "sparse/expert_profile.h"
#include "sparse/gpu_index.h"
#include "sparse/placement.h"

namespace ember {

class DevicePlacement {
public:
    // Reads <model dir>/activation/activation_N.pt (a gate-first model: its calibration's firing
    // frequencies at the session's share for each layer, `layer_levels`, instead); when they are missing or unusable the
    // device holds no FFN neurons and note() says why (a documented fallback, not an error).
    // The hot sets are cached in `gpu_index_path` (PowerInfer's format plus Ember's freshness
    // key; empty: <model>.generated.gpuidx) and reused only when model, statistics and budget
    // match; reset ignores an existing file once, disable keeps every FFN neuron on the CPU.
    // `margin_bytes` of every budget stay free for the device's own work.
    DevicePlacement(std::unique_ptr<backend::Device> device, const model::Architecture& arch,
                    const std::string& model_path, int32_t n_ctx, uint64_t margin_bytes,
                    const std::string& gpu_index_path, bool reset_gpu_index, bool disable_gpu_index,
                    const std::vector<float>& layer_levels);

    // Places dense parts, the KV cache and the hottest neurons within `budget` and returns where
    // each step now runs. Neurons already resident stay; only changed ones move; a KV cache that
    // changes side takes its valid positions along (kv is the host's).
    std::shared_ptr<const model::ExecutionPlan> plan(uint64_t budget, model::KvCache& kv);

    // A mixture of experts: tokens routed to each expert of each layer so far ([n_layer][n_expert])
    // and tokens for which each of their neurons fired ([n_layer][n_expert · n_ff]), by which
    // later plans choose the experts, or the neurons, the device holds (most used first), added
    // to what the model's expert profile (<model>.experts.gguf) expects. Without either, experts
    // go layer by layer.
    void set_expert_uses(std::vector<std::vector<int64_t>> uses, std::vector<std::vector<uint32_t>> fires) {
        expert_uses_ = std::move(uses);
        neuron_fires_ = std::move(fires);
    }

    backend::Device& device() { return *device_; }
    DeviceReport report() const;
    // Per layer, the FFN neurons the device computes: a sparse model's hot ones, every neuron of
    // a dense layer whose FFN is there, a mixture of experts' resident neurons (e·n_ff + i).
    std::vector<std::vector<int32_t>> hot() const;

private:
    // What `p` puts on the device besides FFN rows: the matrices it has kernels for, the rest of
    // the dense share (norms, scratch) reserved beside them, the KV cache, and where each
    // layer's steps run accordingly (the hot sets aside).
    struct DenseShare {
        std::vector<tensor::WeightView> matrices;
        int64_t refused = 0;       // parts with a matrix of a type the device has no kernel for (left on the CPU)
        uint64_t other_bytes = 0;
        uint64_t bytes = 0;        // matrices + other_bytes
        backend::KvShape kv;       // n_layer 0: the cache stays on the host
        model::ExecutionPlan plan;
        std::vector<std::vector<int32_t>> expert_neurons;  // [n_layer] ascending: gate-first experts' resident neurons
    };

    void read_expert_profile();
    std::vector<std::vector<int32_t>> choose_hot(const sparse::Placement& p);
    DenseShare dense_share(const sparse::Placement& p, const model::KvCache& kv) const;
    // Gate-first experts in PowerInfer's layout: the neurons `left` bytes hold, those expected to
    // fire most first.
    std::vector<std::vector<int32_t>> choose_expert_neurons(uint64_t left) const;
    void place_dense(const sparse::Placement& p, const DenseShare& d, model::KvCache& kv);

    std::unique_ptr<backend::Device> device_;
    const model::Architecture& arch_;
    std::string model_path_;
    std::string gpu_index_path_;
    bool reset_gpu_index_;
    bool disable_gpu_index_;
    std::string gpu_index_note_;
    int32_t n_ctx_;
    uint64_t margin_bytes_;
    std::vector<std::vector<double>> activation_;  // empty: no statistics
    std::string activation_note_;
    sparse::GpuIndexSource index_source_;          // model stamp and statistics hash, fixed at load
    std::string placement_note_;
    std::string dense_note_;
    std::vector<std::vector<int32_t>> hot_;        // [n_layer] ascending
    std::shared_ptr<const model::ExecutionPlan> plan_;  // the latest plan()
    std::vector<std::vector<int64_t>> expert_uses_;
    std::vector<std::vector<uint32_t>> neuron_fires_;
    std::vector<std::vector<float>> expert_share_;  // the profile's; empty: none usable
    std::vector<std::vector<float>> neuron_fire_;   // the profile's, when it has them
    std::string expert_profile_note_;
};

}  // namespace ember

#include "backend/device_memory.h"

#include <string>
#include <vector>

#include "common/error.h"
#include "tensor/dtype.h"

namespace ember::backend {
namespace {

uint64_t matrix_bytes(const tensor::WeightView& w) { return uint64_t(w.row_bytes) * uint64_t(w.n_rows); }

}  // namespace

void DeviceMemory::set_budget_bytes(uint64_t bytes) {
    if (footprint_ > bytes)
        fail(name() + ": a budget of " + std::to_string(bytes) + " bytes is below the " + std::to_string(footprint_) +
             " bytes held");
    budget_ = bytes;
}

void DeviceMemory::set_footprint(uint64_t bytes) {
    if (bytes < used_bytes() || bytes > budget_)
        fail(name() + ": a footprint of " + std::to_string(bytes) + " bytes is outside " + std::to_string(used_bytes()) +
             " (in use) .. " + std::to_string(budget_) + " (the budget)");
    if (bytes == footprint_) return;
    resize_memory(bytes);
    footprint_ = bytes;
}

void DeviceMemory::set_dense(std::span<const tensor::WeightView> matrices, uint64_t other_bytes) {
    uint64_t bytes = other_bytes;
    for (const tensor::WeightView& w : matrices) {
        if (!supports(w.type))
            fail(name() + ": a dense matrix is " + tensor::dtype_name(w.type) + ", a type it has no kernels for");
        bytes += matrix_bytes(w);
    }
    const uint64_t others = ffn_bytes_ + kv_.bytes();
    if (others + bytes > footprint_)
        fail(name() + ": " + std::to_string(bytes) + " bytes of dense parts exceed the footprint of " +
             std::to_string(footprint_) + " bytes (" + std::to_string(others) + " in use)");
    std::map<const uint8_t*, tensor::WeightView> next;
    std::vector<tensor::WeightView> arriving, leaving;
    for (const tensor::WeightView& w : matrices)
        if (next.emplace(w.data, w).second && !matrices_.count(w.data)) arriving.push_back(w);
    for (const auto& [data, w] : matrices_)
        if (!next.count(data)) leaving.push_back(w);

    // What leaves is gone even when the arrivals fail; what arrives counts once it is there.
    for (const tensor::WeightView& w : leaving) {
        matrices_.erase(w.data);
        dense_bytes_ -= matrix_bytes(w);
    }
    store_dense(arriving, leaving);
    matrices_ = std::move(next);
    dense_bytes_ = other_bytes;
    for (const auto& [data, w] : matrices_) dense_bytes_ += matrix_bytes(w);
}

void DeviceMemory::set_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons) {
    for (const tensor::WeightView* w : {&rows.gate, &rows.up, &rows.down_t})
        if (w->n_rows && !supports(w->type))
            fail(name() + ": layer " + std::to_string(il) + " has " + tensor::dtype_name(w->type) +
                 " FFN rows, a type it has no kernels for");
    // begin_dots takes one prepared activation for both.
    if (rows.gate.n_rows && tensor::activation_type(rows.gate.type) != tensor::activation_type(rows.up.type))
        fail(name() + ": layer " + std::to_string(il) + "'s gate and up rows need different activation types");
    for (size_t j = 0; j < neurons.size(); ++j) {
        if (neurons[j] < 0 || neurons[j] >= rows.up.n_rows)
            fail(name() + ": neuron " + std::to_string(neurons[j]) + " is outside layer " + std::to_string(il));
        if (j > 0 && neurons[j] <= neurons[j - 1])
            fail(name() + ": layer " + std::to_string(il) + "'s hot neurons are not ascending and distinct");
    }
    const auto held = layer_bytes_.find(il);
    const uint64_t before = held == layer_bytes_.end() ? 0 : held->second;
    const uint64_t after = neuron_bytes(rows) * neurons.size();
    if (used_bytes() - before + after > footprint_)
        fail(name() + ": layer " + std::to_string(il) + "'s " + std::to_string(neurons.size()) + " hot neurons need " +
             std::to_string(after) + " bytes, over the footprint of " + std::to_string(footprint_) + " bytes");
    // A store that fails has let go of the layer's rows.
    ffn_bytes_ -= before;
    layer_bytes_.erase(il);
    store_hot_neurons(il, rows, neurons);
    if (after == 0) return;
    layer_bytes_[il] = after;
    ffn_bytes_ += after;
}

void DeviceMemory::set_kv_cache(const KvShape& shape, uint16_t* host_k, uint16_t* host_v, int32_t n_past) {
    if (shape == kv_) return;
    if (shape.head_dim > max_head_dim())
        fail(name() + ": heads of " + std::to_string(shape.head_dim) + " values exceed the attention kernel's " +
             std::to_string(max_head_dim()));
    const uint64_t others = used_bytes() - kv_.bytes();
    if (others + shape.bytes() > footprint_)
        fail(name() + ": a KV cache of " + std::to_string(shape.bytes()) + " bytes exceeds the footprint of " +
             std::to_string(footprint_) + " bytes (" + std::to_string(others) + " in use)");
    // A store that fails holds no cache.
    const KvShape old = kv_;
    kv_ = {};
    store_kv_cache(old, shape, host_k, host_v, n_past);
    kv_ = shape;
}

}  // namespace ember::backend

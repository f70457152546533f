#include "backend/device_memory.h"

#include <algorithm>
#include <string>
#include <vector>

#include "backend/arena/arena_layout.h"
#include "backend/cuda/ffn_math.h"

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

uint64_t device_work_bytes(const WorkShape& s) {
    const auto block = [](int64_t bytes) { return ArenaLayout::aligned(uint64_t(std::max<int64_t>(bytes, 0))); };
    const int64_t n = std::max(s.n_batch, 1), f = sizeof(float);
    // The widest activation a product reads, in its largest layout (F16).
    const int64_t act = 2 * std::max(s.n_embd, s.n_ff);
    uint64_t bytes = 0;
    // Hot FFN rows, one token at a time: the input in F16 and Q8_0, four per-neuron buffers,
    // the down-projection's partial sums per chunk of neurons, its output.
    bytes += block(2 * s.n_embd + s.n_embd / 32 * 34) + 4 * block(s.n_ff * f) +
             block(int64_t(gpu::down_chunks(int32_t(s.n_ff))) * s.n_embd * f) + block(s.n_embd * f);
    // Dense products queued in one round (Q, K and V; gate and up; the LM head for the token
    // whose logits are wanted), each share aligned on its own.
    bytes += block(3 * n * act) + 3 * ArenaLayout::kAlign;
    bytes += block(f * std::max(s.n_vocab, n * std::max(s.n_q + 2 * s.n_gqa, 2 * s.n_ff))) + 3 * ArenaLayout::kAlign;
    // Attention with the products elsewhere: Q, K and V in, the heads' output, the scores.
    bytes += block(n * (s.n_q + 2 * s.n_gqa) * f) + block(n * s.n_q * f) + block(int64_t(s.n_head) * s.n_ctx * f);
    // The whole attention sub-layer: input and angles, output, and the intermediates.
    bytes += block(n * (s.n_embd + s.head_dim) * f) + block(n * s.n_embd * f);
    bytes += 2 * block(n * s.n_embd * f) + 2 * block(n * s.n_gqa * f) + block(n * 2 * s.n_embd);
    // The predictor (its rank below n_ff): input, scores, hidden layer and its activation.
    bytes += block(n * s.n_embd * f) + block(n * s.n_ff * f) + block(n * s.n_ff * f) + block(n * act);
    // A norm's weight and bias per layer.
    bytes += 2 * uint64_t(std::max(s.n_layer, 0)) * block(s.n_embd * f);
    return bytes;
}

}  // namespace ember::backend

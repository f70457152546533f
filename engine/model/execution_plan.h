#pragma once
// Where each step of a token's forward pass runs. The session's placement makes one plan per
// device budget; the forward pass only reads it (through the Executor), so every "device or
// CPU" decision of a token is made here, once, and not rediscovered near a product.

#include <cstdint>
#include <vector>

namespace ember::model {

enum class Where : uint8_t { Cpu, Device };

// A layer's attention sub-layer (norm, Q/K/V, RoPE, attention over the KV cache, output, residual).
enum class AttentionOn : uint8_t {
    Cpu,             // every step on the CPU
    DeviceProducts,  // the Q/K/V and output products on the device, the rest (and the KV cache) on the CPU
    DeviceSublayer,  // the whole sub-layer on the device, with this layer's KV cache: one round trip
};

struct LayerPlan {
    AttentionOn attention = AttentionOn::Cpu;
    Where predictor = Where::Cpu;  // sparse models: the predictor MLP
    Where ffn = Where::Cpu;        // dense models: the FFN's gate/up/down matrices
    // Sparse models: hot[i] = 1 when neuron i's gate/up/down rows are resident on the device
    // (they run there when active); empty when none are.
    std::vector<uint8_t> hot;
    int64_t n_hot = 0;
    // A mixture of experts: experts[e] = 1 when expert e's matrices are resident on the device
    // (it runs there, whole); empty when none are.
    std::vector<uint8_t> experts;
};

struct ExecutionPlan {
    std::vector<LayerPlan> layers;  // [n_layer]
    Where lm_head = Where::Cpu;

    // Everything on the CPU.
    static ExecutionPlan cpu(int32_t n_layer) {
        ExecutionPlan p;
        p.layers.resize(size_t(n_layer));
        return p;
    }
};

}  // namespace ember::model

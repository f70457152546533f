#pragma once
// The stream half of a device (architecture.md, "Devices"): work queued on what the memory
// half holds, joined by wait(). Adding an operation changes this half only.

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "tensor/layer_steps.h"
#include "tensor/matmul.h"
#include "tensor/rope.h"

namespace ember::backend {

// One layer's attention sub-layer: out = [x +] wo · attention(rope(qkv · norm(x))).
struct AttentionLayer {
    tensor::Norm norm;
    std::span<const tensor::WeightView> qkv;  // Q, K and V; or one fused matrix, Q's rows, then K's, then V's
    tensor::WeightView wo;
    tensor::RopePairs pairs;
    bool residual;  // out = x + the sub-layer's result; else the result alone
    // CPU only (the plan keeps such layers' whole sub-layer off the device):
    std::array<const float*, 3> bias{};     // Q, K and V biases, or none
    std::array<const float*, 2> qk_norm{};  // Q's and K's per-head RMSNorm weights [head_dim], or none
};

struct DeviceTraffic {
    uint64_t bytes_uploaded = 0;        // FFN rows copied to the device, ever
    uint64_t rows_computed = 0;         // neuron rows (gate, up and down_t each count) computed there
    uint64_t dense_bytes_uploaded = 0;  // dense matrices copied to the device, ever
    uint64_t matmuls = 0;               // dense matrix products computed there (one per call)
    uint64_t attentions = 0;            // layers of attention computed there (one per call)
    uint64_t attention_sublayers = 0;    // whole attention sub-layers computed there, one round trip each
    uint64_t predictors = 0;            // predictor MLPs computed there (one per call)
    uint64_t joins = 0;                 // wait() calls that found work queued: round trips to the device
};

class DeviceStream {
public:
    virtual ~DeviceStream() = default;

    // The two halves of a layer's FFN run concurrently: the device's work is queued by begin_*
    // and the CPU computes the cold neurons meanwhile; wait() is the join. Every pointer and
    // span passed to begin_* must stay valid and unchanged until wait() returns.
    //
    // Queues, for resident neurons ids[j]: g[j] = gate row · x (when the layer has a gate),
    // v[j] = up row · x. x is the FFN input prepared in the rows' dot-product type
    // (tensor::PreparedActivations: F16 values, or Q8_0 blocks first and then any CPU-specific
    // packing, which a device may ignore).
    virtual void begin_dots(int32_t il, const uint8_t* x_prepared, std::span<const int32_t> ids, float* g,
                            float* v) = 0;
    // Queues y (n_embd) = Σ coef[j] · down_t row of resident neuron ids[j], summed in the order given.
    virtual void begin_down(int32_t il, std::span<const int32_t> ids, const float* coef, float* y) = 0;
    // Queues y[t * w.n_rows + r] = row r of resident w · x row t, for t < n_tokens. x holds the
    // rows prepared as tensor::PreparedActivations does for w's type, x_stride bytes apart.
    // Several products may be queued before one wait().
    virtual void begin_matmul(const tensor::WeightView& w, const uint8_t* x, size_t x_stride, int32_t n_tokens,
                              float* y) = 0;
    // Queues, for layer il of the held KV cache: the K and V rows of n_tokens tokens (floats,
    // [n_tokens][n_embd_gqa]) stored at positions pos0.. as F16, then causal attention (GQA: head
    // h reads KV head h / (n_head / n_head_kv)) of q ([n_tokens][n_head * head_dim]) into out, as
    // tensor::attend_head computes it for each token and head.
    virtual void begin_attention(int32_t il, int32_t pos0, int32_t n_tokens, const float* q, const float* k,
                                 const float* v, float* out) = 0;
    // Queues layer il's whole attention sub-layer for n_tokens rows of x ([n_tokens][n_embd]) into
    // out (which may be x): the norm, the Q/K/V products, RoPE by `angles` ([n_tokens][head_dim],
    // tensor::rope_angles of positions pos0..), K and V stored at pos0.. and attention as
    // begin_attention does, the output product and the residual, each computed as the CPU
    // computes it (tensor::rms_norm / layer_norm, the products over activations prepared for the
    // weights' type, tensor::rope_rotate). Every matrix must be resident and the KV cache held.
    virtual void begin_attention_layer(int32_t il, const AttentionLayer& layer, int32_t pos0, int32_t n_tokens,
                                       const float* angles, const float* x, float* out) = 0;
    // Queues a layer's activation predictor for n_tokens rows of u ([n_tokens][fc1.n_cols]):
    // scores ([n_tokens][fc2.n_rows]) = fc2 · ReLU(fc1 · u), each product over activations
    // prepared for its weights' type as the CPU prepares them. Both matrices must be resident.
    virtual void begin_predictor(const tensor::WeightView& fc1, const tensor::WeightView& fc2, const float* u,
                                 int32_t n_tokens, float* scores) = 0;
    // Blocks until the queued work is done; throws EngineError if it failed.
    virtual void wait() = 0;

    // What crossed the bus and what was computed, ever (uploads by the memory half included).
    virtual DeviceTraffic traffic() const = 0;
};

// Waits for the device's queued work before the buffers it uses can change, also when the
// CPU's half throws.
struct DeviceJoin {
    explicit DeviceJoin(DeviceStream* d) : device(d) {}
    ~DeviceJoin() {
        if (!device) return;
        try {
            device->wait();
        } catch (...) {
            // Only reached while the CPU's own error unwinds; that error is the one to report.
        }
    }
    void wait() { device->wait(); }
    DeviceStream* device;
};

}  // namespace ember::backend

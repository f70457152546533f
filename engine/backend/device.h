#pragma once
// The one seam between the engine and an accelerator (architecture.md, "Devices"): a device
// holds the hot FFN neurons of each layer and computes them, while the CPU computes the cold
// ones; it also holds and multiplies the dense matrices the placement gives it (attention,
// predictors, the LM head).
// Device memory never leaves this folder; the engine asks through this interface only.

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "tensor/layer_steps.h"
#include "tensor/matmul.h"
#include "tensor/rope.h"
#include "tensor/thread_pool.h"

namespace ember::backend {

// One layer's FFN matrices on the host; row i of each belongs to neuron i.
struct FfnRows {
    tensor::WeightView gate;    // n_rows == 0 when the architecture has no gate
    tensor::WeightView up;
    tensor::WeightView down_t;  // row i: neuron i's output vector
};

// Device bytes of one resident neuron: its gate, up and down_t rows.
inline uint64_t neuron_bytes(const FfnRows& rows) {
    return (rows.gate.n_rows ? rows.gate.row_bytes : 0) + rows.up.row_bytes + rows.down_t.row_bytes;
}

// The F16 key/value cache a device holds: per layer, per position, n_head_kv * head_dim values.
struct KvShape {
    int32_t n_layer = 0;  // 0: no cache on the device
    int32_t n_ctx = 0;
    int32_t n_head = 0;
    int32_t n_head_kv = 0;
    int32_t head_dim = 0;
    int32_t n_embd_gqa() const { return n_head_kv * head_dim; }
    uint64_t bytes() const { return 2 * uint64_t(n_layer) * uint64_t(n_ctx) * uint64_t(n_embd_gqa()) * 2; }
    friend bool operator==(const KvShape&, const KvShape&) = default;
};

// What a device holds, by kind; the budget covers their sum.
struct DeviceUsage {
    uint64_t dense = 0;  // dense matrices and the reserved rest of the dense share (norms, scratch)
    uint64_t kv = 0;     // the KV cache
    uint64_t ffn = 0;    // hot FFN rows
    uint64_t total() const { return dense + kv + ffn; }
};

// One layer's attention sub-layer: out = [x +] wo · attention(rope(qkv · norm(x))).
struct AttentionLayer {
    tensor::Norm norm;
    std::span<const tensor::WeightView> qkv;  // Q, K and V; or one fused matrix, Q's rows, then K's, then V's
    tensor::WeightView wo;
    tensor::RopePairs pairs;
    bool residual;  // out = x + the sub-layer's result; else the result alone
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

class Device {
public:
    virtual ~Device() = default;

    virtual std::string name() const = 0;
    virtual uint64_t budget_bytes() const = 0;
    virtual DeviceUsage usage() const = 0;
    uint64_t used_bytes() const { return usage().total(); }
    virtual bool supports(tensor::DType type) const = 0;
    // The most this session may hold on the device (the VRAM slider). Throws EngineError when
    // it is below the footprint: shrink first.
    virtual void set_budget_bytes(uint64_t bytes) = 0;
    // The memory held for the placement, at least what is in use and at most the budget; what
    // is placed must fit in it. A GPU takes exactly this much, in one allocation that everything
    // it holds comes from (its scratch included), so the VRAM slider shows what the process
    // takes; what is held survives a change. Throws EngineError, changing nothing, outside
    // those bounds or when the GPU has not the memory.
    virtual void set_footprint(uint64_t bytes) = 0;
    virtual uint64_t footprint() const = 0;

    // Makes exactly `matrices` resident (the dense weights the placement put on the device,
    // known by their host data), copying only those not already there, and reserves
    // `other_bytes` for the rest of the dense share (norms, KV cache, compute scratch). Throws
    // EngineError, changing nothing, past the footprint or for a type supports() refuses.
    virtual void set_dense(std::span<const tensor::WeightView> matrices, uint64_t other_bytes) = 0;
    // Whether `w` (by its host data) is resident through set_dense.
    virtual bool holds(const tensor::WeightView& w) const = 0;

    // Makes exactly `neurons` (ascending) of layer il resident, copying only rows not already
    // there. Throws EngineError, changing nothing, when the result would exceed the footprint.
    virtual void set_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons) = 0;

    // Moves the KV cache to the device (shape.n_layer > 0) or back to the host (an empty shape),
    // with its first n_past positions: host_k and host_v are the host's caches in KvShape's
    // layout, read when the cache arrives and written when it leaves. A cache of the same shape
    // already held stays. Throws EngineError, changing nothing, past the footprint.
    virtual void set_kv_cache(const KvShape& shape, uint16_t* host_k, uint16_t* host_v, int32_t n_past) = 0;
    virtual bool holds_kv_cache() const = 0;

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

    virtual DeviceTraffic traffic() const = 0;
};

// A host-memory stand-in with a byte budget: keeps its own copies of the hot rows, refuses
// allocations past the footprint and footprints past the budget, counts traffic, and computes the hot FFN half with the CPU
// kernels on its own thread, concurrently with the CPU's half as a GPU would. Dense matrices
// are read in place (the model's weights are immutable and outlive the session) but counted
// as held and uploaded; their products run on `pool` (the session's, which must outlive the
// device; null: one thread of its own). It makes placement, re-planning, the join and the
// split view testable without a GPU.
std::unique_ptr<Device> make_sim_device(uint64_t budget_bytes, tensor::ThreadPool* pool = nullptr);

}  // namespace ember::backend

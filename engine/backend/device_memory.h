#pragma once
// The memory half of a device (architecture.md, "Devices"): the dense matrices, the hot FFN
// rows and the KV cache the placement puts there, within a footprint within a budget. The
// bounds and the bytes held of each kind are kept here, once for every device; a device
// implements only where the bytes live (the store hooks), as ggml separates buffers from
// backends.

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "tensor/matmul.h"

namespace ember::backend {

// One layer's FFN matrices on the host; row i of each belongs to neuron i.
struct FfnRows {
    tensor::WeightView gate;    // n_rows == 0 when the architecture has no gate
    tensor::WeightView up;
    tensor::WeightView down_t;  // row i: neuron i's output vector
    // The most neurons one begin_dots or begin_down asks for, by which a device sizes its work
    // buffers: a mixture of experts' layer holds all its experts' neurons but a token asks for
    // its routed experts' only. 0: as many as are resident.
    int64_t most_per_call = 0;
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

// What sizes a device's own work: the model's widths, the context and the batch.
struct WorkShape {
    int64_t n_embd = 0;
    int64_t n_q = 0;    // n_head · head_dim
    int64_t n_gqa = 0;  // n_head_kv · head_dim
    int64_t n_ff = 0;   // a layer's FFN neurons (an expert's, times the experts a token uses)
    int64_t n_vocab = 0;
    int32_t n_layer = 0;
    int32_t n_head = 0;
    int32_t head_dim = 0;
    int32_t n_ctx = 0;
    int32_t n_batch = 0;  // tokens evaluated together
};

// The most a GPU's own work takes beside what is placed on it: its scratch for the products,
// attention, predictors and hot FFN rows of a batch, the norms' weights it keeps, and each
// block's rounding to the arena's alignment. A placement keeps at least this much of the budget
// free; the sim device, a GPU's preview, is planned the same way.
uint64_t device_work_bytes(const WorkShape& s);

// What a device holds, by kind; the budget covers their sum.
struct DeviceUsage {
    uint64_t dense = 0;  // dense matrices and the reserved rest of the dense share (norms, scratch)
    uint64_t kv = 0;     // the KV cache
    uint64_t ffn = 0;    // hot FFN rows
    uint64_t total() const { return dense + kv + ffn; }
};

class DeviceMemory {
public:
    virtual ~DeviceMemory() = default;

    virtual std::string name() const = 0;
    // Whether it computes with weights of this type; set_dense and set_hot_neurons refuse others.
    virtual bool supports(tensor::DType type) const = 0;
    // The widest attention head it computes; set_kv_cache refuses wider ones.
    virtual int32_t max_head_dim() const = 0;

    uint64_t budget_bytes() const { return budget_; }
    DeviceUsage usage() const { return {dense_bytes_, kv_.bytes(), ffn_bytes_}; }
    uint64_t used_bytes() const { return usage().total(); }
    // The most this session may hold on the device (the VRAM slider). Throws EngineError when
    // it is below the footprint: shrink first.
    void set_budget_bytes(uint64_t bytes);
    // The memory held for the placement, at least what is in use and at most the budget; what
    // is placed must fit in it. A GPU takes exactly this much, in one allocation that everything
    // it holds comes from (its scratch included), so the VRAM slider shows what the process
    // takes; what is held survives a change. Throws EngineError, changing nothing, outside
    // those bounds or when the GPU has not the memory.
    void set_footprint(uint64_t bytes);
    uint64_t footprint() const { return footprint_; }

    // Makes exactly `matrices` resident (the dense weights the placement put on the device,
    // known by their host data), copying only those not already there, and reserves
    // `other_bytes` for the rest of the dense share (norms, KV cache, compute scratch). Throws
    // EngineError, changing nothing, past the footprint or for a type supports() refuses.
    void set_dense(std::span<const tensor::WeightView> matrices, uint64_t other_bytes);
    // Whether `w` (by its host data) is resident through set_dense.
    bool holds(const tensor::WeightView& w) const { return matrices_.count(w.data) > 0; }

    // Makes exactly `neurons` (ascending) of layer il resident, copying only rows not already
    // there. Throws EngineError, changing nothing, when the result would exceed the footprint,
    // for ids out of order or range, or for rows it has no kernels for.
    void set_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons);

    // Moves the KV cache to the device (shape.n_layer > 0) or back to the host (an empty shape),
    // with its first n_past positions: host_k and host_v are the host's caches in KvShape's
    // layout, read when the cache arrives and written when it leaves. A cache of the same shape
    // already held stays. Throws EngineError, changing nothing, past the footprint or for heads
    // wider than max_head_dim().
    void set_kv_cache(const KvShape& shape, uint16_t* host_k, uint16_t* host_v, int32_t n_past);
    bool holds_kv_cache() const { return kv_.n_layer > 0; }

protected:
    explicit DeviceMemory(uint64_t budget) : budget_(budget) {}

    const KvShape& kv_shape() const { return kv_; }

    // The storage hooks: where the bytes live. Each is called once the checks pass and first
    // finishes any queued work that reads what it changes; the base then counts what is held.
    // A hook that throws (memory a GPU cannot have) leaves what it says below.

    // The memory held becomes `bytes`, keeping what is held. On a throw nothing changed.
    virtual void resize_memory(uint64_t bytes) = 0;
    // `leaving` are let go, then `arriving` (none held yet) are uploaded. On a throw none of
    // `arriving` is held.
    virtual void store_dense(std::span<const tensor::WeightView> arriving, std::span<const tensor::WeightView> leaving) = 0;
    // Layer il holds exactly `neurons` (ascending, in range), rows already resident kept. On a
    // throw the layer holds none.
    virtual void store_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons) = 0;
    // The cache of shape `old` (n_layer 0: none) goes back to host_k/host_v, then one of `next`
    // (n_layer 0: none) comes from them, each with its first n_past positions. On a throw no
    // cache is held.
    virtual void store_kv_cache(const KvShape& old, const KvShape& next, uint16_t* host_k, uint16_t* host_v,
                                int32_t n_past) = 0;

private:
    uint64_t budget_;
    uint64_t footprint_ = 0;
    std::map<const uint8_t*, tensor::WeightView> matrices_;  // resident dense matrices, by host data
    uint64_t dense_bytes_ = 0;                               // theirs and the rest of the dense share
    std::map<int32_t, uint64_t> layer_bytes_;                // hot rows held per layer
    uint64_t ffn_bytes_ = 0;
    KvShape kv_;
};

}  // namespace ember::backend

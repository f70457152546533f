#pragma once
// Hot-neuron placement under a device byte budget (docs/FORMATS.md §7).
//
// Three steps, all pure computation:
//   1. plan_placement(): a byte budget and the model's exact byte costs in, a Placement out —
//      which dense groups go to the device (PowerInfer's priority order), where the KV cache
//      lives, and how many FFN neurons fit in what is left.
//   2. solve_hot_counts(): that neuron capacity and the activation statistics in, a hot-neuron
//      count per layer out (PowerInfer's ILP, solved exactly as a global top-K over buckets).
//   3. hot_neurons(): the counts in, the neuron ids per layer out (PowerInfer's `gpu_bucket`).
// diff_placement() compares two such results for re-planning.

#include <cstdint>
#include <string>
#include <vector>

namespace ember::sparse {

// PowerInfer's bucket: hot counts are multiples of it because the Q4_0 GPU axpy processes rows
// in groups of 256 (§7.3).
constexpr int64_t kNeuronBucket = 256;

// ---- Solver -------------------------------------------------------------------------------

// activation[il][i]: hotness of neuron i of layer il (activation_il.pt); values must be finite
// and non-negative. Returns the hot neuron count per layer for a budget of `capacity_neurons`
// neurons over all layers.
//
// Per layer the values are sorted descending and cut into buckets of `bucket` neurons; a
// bucket's benefit is the sum of its values. The K = floor(capacity / bucket) buckets with the
// largest benefits over all layers are taken (ties: lower layer first, then lower bucket);
// benefits never increase along a layer, so every layer gets a prefix of its buckets. This is
// the optimum of PowerInfer's 0/1 ILP with threshold 0 (§7.4).
//
// n_ff not a multiple of `bucket`: the last, partial bucket (the layer's coldest
// n_ff % bucket neurons) is a bucket of its own. Its benefit is its own sum, it costs one
// whole bucket of capacity (so the neurons placed never exceed the capacity), and taking it
// completes the layer: the count is then n_ff, the "whole layer on the device" case of §7.3,
// which needs no multiple of 256. Every count is therefore a multiple of `bucket` or n_ff.
std::vector<int64_t> solve_hot_counts(const std::vector<std::vector<double>>& activation, int64_t capacity_neurons,
                                      int64_t bucket = kNeuronBucket);

// Per layer the ids of the counts[il] largest values (ties: lower id first), sorted ascending.
// This is PowerInfer's `gpu_bucket`: GPU-local row r holds neuron result[il][r].
std::vector<std::vector<int32_t>> hot_neurons(const std::vector<std::vector<double>>& activation,
                                              const std::vector<int64_t>& counts);

// ---- Budget -> capacity ---------------------------------------------------------------------

// The model's device costs in bytes, exact (the tensors' own sizes), per layer where it varies.
// All per-layer vectors have n_layer entries.
struct PlacementCosts {
    std::vector<uint64_t> attn_bytes;       // [n_layer] attn_norm(+bias), attn_q/k/v/output or attn_qkv, ...
    std::vector<uint64_t> predictor_bytes;  // [n_layer] fc1 + fc2
    std::vector<uint64_t> ffn_norm_bytes;   // [n_layer] ffn_norm (0 where the layer has none, e.g. Falcon)
    uint64_t output_bytes = 0;              // output + output_norm(+bias)
    uint64_t kv_k_bytes = 0;                // the whole K cache, all layers: n_layer * n_ctx * n_embd_gqa * elem
    uint64_t kv_v_bytes = 0;                // the whole V cache, likewise
    std::vector<uint64_t> neuron_bytes;     // [n_layer] one neuron's rows: gate (absent for Falcon) + up + down_t
    std::vector<uint64_t> dense_ffn_bytes;  // [n_layer] dense models: gate (if any) + up + down; may be empty
    std::vector<int64_t> n_ff;              // [n_layer] neurons per layer
    uint64_t margin_bytes = 0;              // scratch / compute buffers, sized by the caller for its batch
    int64_t bucket = kNeuronBucket;
};

// Bytes of one neuron's FFN rows: (gate ? 3 : 2) rows of n_embd elements of `ggml_type`.
// Fails when n_embd is not a multiple of the type's block or the type is unknown.
uint64_t neuron_row_bytes(int64_t n_embd, uint32_t ggml_type, bool has_gate);

struct Placement {
    int32_t n_layer = 0;
    int32_t n_attn_layers = 0;       // attention of layers [0, n_attn_layers) on the device
    int32_t n_predictor_layers = 0;  // predictors of layers [0, n) on the device
    int32_t n_ffn_norm_layers = 0;   // ffn_norm of layers [0, n) on the device
    int32_t n_ffn_layers = 0;        // dense models: FFN matrices of layers [0, n) on the device
    int32_t n_kv_layers = 0;         // the KV cache of layers [0, n) on the device
    bool output_on_device = false;
    bool dense_complete = false;     // every dense group placed: the FFN split is allowed (§7.2 step 6)
    bool kv_v_on_device = false;     // K and V are placed together (see plan_placement)
    bool kv_k_on_device = false;

    uint64_t budget_bytes = 0;
    uint64_t margin_bytes = 0;       // charged whenever anything is on the device, else 0
    uint64_t dense_bytes = 0;        // attention + predictors + ffn norms + output placed
    uint64_t kv_bytes = 0;
    uint64_t ffn_budget_bytes = 0;   // R: what was left for FFN rows; stored as split.vram_capacity
    int64_t ffn_capacity_neurons = 0;  // the solver's capacity: a multiple of `bucket`
    uint64_t ffn_bytes = 0;          // upper bound of the FFN rows any solution for that capacity needs
    uint64_t bytes_used = 0;         // margin + dense + kv + ffn; never above budget_bytes

    // PowerInfer's equivalent n_gpu_layers (§7.2): index+1 of the last layer with attention
    // placed, n_layer+1 once the output group is placed, +1 for V, +1 for K.
    int32_t n_gpu_layers = 0;

    // Empty when everything dense and the KV cache fit; otherwise what stayed on the host and
    // why, e.g. "budget too small for attention: running FFN on CPU only (...)".
    std::string explanation;
};

// Allocates `budget_bytes` in PowerInfer's priority order (§7.2), with exact costs:
//   0. the compute margin (nothing goes to the device unless the margin fits: whatever runs
//      there needs its scratch buffers);
//   1. attention of layers 0..n_layer-1, 2. predictors of layers 0.., 3. ffn_norm of layers 0..,
//   4. the output group — each a unit in that order, and the first unit that does not fit stops
//      all further dense offloading (the reference does this tensor by tensor; Ember keeps a
//      layer's attention whole);
//   5. only if all of that fit: the K and V caches, together (PowerInfer may place V alone,
//      which Ember's device could not use: attention runs there only with both);
//   6. only if all dense groups fit: FFN neurons with the rest R. The capacity is
//      floor(R / max neuron_bytes) rounded down to a multiple of `bucket` and capped at what the
//      solver can place, so any solution costs at most R.
// Fails (naming the field) when the per-layer vectors disagree in length.
Placement plan_placement(const PlacementCosts& costs, uint64_t budget_bytes);

// Dense models, as llama.cpp offloads layers: after the compute margin, whole layers from the
// first on — attention, FFN matrices, norms and the layer's share of the KV cache — as many as
// fit; then the output group, once every layer is there. No FFN neurons (ffn_capacity_neurons 0).
// Fails (naming the field) when the per-layer vectors disagree in length.
Placement plan_layer_offload(const PlacementCosts& costs, uint64_t budget_bytes);

// Exact bytes of the FFN rows for solved hot counts: sum of counts[il] * neuron_bytes[il].
uint64_t ffn_hot_bytes(const PlacementCosts& costs, const std::vector<int64_t>& counts);

// The default budget when none is given: free device memory minus 256 MiB, 0 instead of the
// reference's unsigned underflow when less is free (§7.1).
uint64_t budget_from_free_memory(uint64_t free_bytes);

// PowerInfer's own capacity formula (§7.6), for comparison in tests only: it charges
// n_ff * 4.5 (gated) or n_ff * 2 bytes-per-element per 4 neurons, not the real row bytes.
//   bytes_n = n_ff * type_size / block_size; per = int(bytes_n * (gate ? 4.5 : 2));
//   cap = floor(R / per) * 4
int64_t powerinfer_capacity(uint64_t ffn_budget_bytes, int64_t n_ff, uint32_t ffn_up_type, bool has_gate);

// ---- Re-planning ----------------------------------------------------------------------------

struct LayerDiff {
    std::vector<int32_t> to_device;  // hot now, not before (ascending)
    std::vector<int32_t> to_host;    // hot before, not now (ascending)
};

struct PlacementDiff {
    std::vector<LayerDiff> layers;  // [n_layer]
    int64_t n_to_device() const;
    int64_t n_to_host() const;
    bool empty() const { return n_to_device() == 0 && n_to_host() == 0; }
};

// before/after: hot neuron ids per layer as hot_neurons() returns them (ascending, unique).
// Only neurons whose placement changes are listed.
PlacementDiff diff_placement(const std::vector<std::vector<int32_t>>& before,
                             const std::vector<std::vector<int32_t>>& after);

}  // namespace ember::sparse

#pragma once
// One expert of a mixture-of-experts FFN over the batch rows routed to it: y = down ·
// act(gate · x, up · x). A ReGLU expert (SmallThinker's) computing one token runs gate first,
// as PowerInfer does without a predictor: every gate row, then the up rows only of the neurons
// whose gate is above 0 (the others' activation is exactly 0), and, when the down weights are
// stored transposed (a row per neuron, PowerInfer's layout), only those neurons' down rows; with
// some of those neurons on a device, a token's routed experts split between the two.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backend/device_memory.h"
#include "backend/device_stream.h"
#include "gguf/gguf_reader.h"
#include "model/hparams.h"
#include "model/tensor_binding.h"
#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace ember::model {

// A mixture-of-experts FFN: expert e's rows are e·n_ff.. of gate and up and e·n_embd.. of down
// (GGUF's 3-D expert tensors, one slice per expert); or, down stored transposed (PowerInfer's
// layout), e·n_ff.. of down, a row per neuron.
struct MoeFfnWeights {
    tensor::WeightView gate;  // [n_embd] -> [n_expert · n_ff]
    tensor::WeightView up;    // [n_embd] -> [n_expert · n_ff]
    tensor::WeightView down;  // [n_ff] -> [n_expert · n_embd]; transposed: n_expert · n_ff rows of [n_embd]
    bool down_transposed = false;
};

// A layer's router (`ffn_gate_inp`, [n_embd] -> [n_expert]) and experts.
struct MoeLayer {
    tensor::WeightView router;
    MoeFfnWeights experts;
};

// Reads `{arch}.expert_count`, `.expert_used_count` (required, 1 <= used <= count) and
// `.expert_feed_forward_length` (hp.n_ff, default `feed_forward_length`).
void read_expert_hparams(const gguf::File& file, const std::string& arch, HParams& hp);

// Whether a 3-D expert down tensor is stored transposed, a row per neuron (PowerInfer's layout,
// ne = [n_embd, n_ff, n_expert]), rather than as upstream stores it ([n_ff, n_embd, n_expert]).
bool down_stored_transposed(const gguf::TensorInfo& t, int64_t n_embd, int64_t n_ff);

// Binds layer `prefix`'s router and experts: gate and down for matrix products, up also for
// single rows when its experts run gate first (ReGLU); down in upstream's layout or PowerInfer's
// transposed one, told apart by shape. by_neuron (ModelParams::experts_by_neuron): a gate-first
// expert's down in upstream's layout is transposed at load into PowerInfer's. Adds the experts'
// bytes to *expert_bytes.
MoeLayer bind_moe_layer(TensorBinder& bind, const gguf::File& file, const std::string& prefix, const HParams& hp,
                        bool by_neuron, uint64_t* expert_bytes);

// The matrices of each expert, for a placement of whole experts (none when down is transposed).
std::vector<std::vector<tensor::WeightView>> expert_matrices(const MoeFfnWeights& w, const HParams& hp);

// Gate-first experts with down transposed: every expert's neurons as rows a device can hold one
// by one, neuron i of expert e being row e·n_ff + i of up and of down. The gate stays on the CPU,
// which decides by it which neurons run. Empty otherwise: upstream's layout places whole experts.
backend::FfnRows expert_neuron_rows(const MoeFfnWeights& w, const HParams& hp);

struct ExpertWeights {
    tensor::WeightView gate;  // [n_embd] -> [n_ff]
    tensor::WeightView up;    // [n_embd] -> [n_ff], rows read singly when gate-first
    tensor::WeightView down;  // [n_ff] -> [n_embd]; transposed: n_ff rows of [n_embd]
    bool down_transposed = false;
};

// Expert e of a layer's experts.
ExpertWeights expert_weights(const MoeFfnWeights& w, const HParams& hp, int32_t e);
// Its gate, up and down bytes.
uint64_t expert_bytes(const ExpertWeights& w);

// Buffers of one call, sized for up to n_batch rows by the caller: g and up hold [m][n_ff], act
// [m][n_ff], y [m][n_embd]; active has capacity n_ff.
struct ExpertBuffers {
    float* g;
    float* up;
    float* act;
    std::vector<int32_t>& active;
    tensor::PreparedActivations& prepared;
};

struct ExpertWork {
    int64_t neurons = 0;  // neurons computed (up rows read), summed over the rows
    uint64_t bytes = 0;   // weight bytes read
    int64_t neurons_on_device = 0;  // of which computed by a device
    uint64_t bytes_on_device = 0;   // and the rows it read
};

// y ([m][n_embd]) = the expert of x ([m][n_embd]); b.act holds the activations after.
ExpertWork run_expert(const ExpertWeights& w, FfnGate gate, const float* x, int32_t m, float* y, tensor::ThreadPool& pool,
                   ExpertBuffers b);

// One token's expert routed to it, for a split between the CPU and a device.
struct RoutedExpert {
    ExpertWeights w;    // gate first, down transposed
    int32_t first_row;  // its neuron i is the device layer's row first_row + i
    float weight;       // its gating weight
};

// What a split needs, for k routed experts of n_ff neurons: g and act hold [k][n_ff], up n_ff,
// y n_embd, v, coef and y_device as their names say; the lists have capacity k·n_ff (cold_end
// k + 1).
struct ExpertSplitBuffers {
    float* g;
    float* act;
    float* up;
    float* y;
    std::vector<int32_t>& cold;      // each expert's fired neurons the CPU computes, expert after expert
    std::vector<int64_t>& cold_end;  // where expert j's end in cold
    std::vector<int32_t>& hot;       // the fired neurons the device holds, as j·n_ff + i
    std::vector<int32_t>& ids;       // and their rows on the device
    float* v;                        // the device's up products for them
    float* coef;                     // their weighted activations, the device's down coefficients
    float* y_device;                 // [n_embd] the device's share of the output
    tensor::PreparedActivations& prepared;
};

// out ([n_embd]) = Σ weight · expert(x) over one token's routed gate-first experts, some of whose
// neurons the device holds (resident[row], the layer's rows). The CPU computes every gate
// product, then the up and down rows of the fired neurons it holds; the device those of the
// others, all experts in one call each way, at the same time as the CPU. s.act holds every
// expert's activations after.
ExpertWork split_experts(std::span<const RoutedExpert> experts, const uint8_t* resident, int32_t il, const float* x,
                         float* out, backend::DeviceStream& device, tensor::ThreadPool& pool, ExpertSplitBuffers s);

}  // namespace ember::model

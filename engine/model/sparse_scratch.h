#pragma once
// Buffers and counters of the sparse FFN, sized once per session.

#include <cstdint>
#include <vector>

#include "tensor/matmul.h"

namespace ember::model {

// Per-layer counters, accumulated over every token the session evaluates.
struct SparseLayerStats {
    int64_t tokens = 0;
    int64_t active = 0;          // neurons predicted active, summed over tokens
    int64_t active_on_device = 0;  // of which computed on the device
    uint64_t bytes_read = 0;     // predictor plus the FFN rows of active neurons
    uint64_t bytes_read_on_device = 0;  // of which FFN rows the device read
    uint64_t attention_bytes_read = 0;  // attention's rows of kept inputs (HParams::sparse_attn_input)
    double predictor_ms = 0.0;   // time in the predictor
    double ffn_ms = 0.0;         // time in the gate/up rows and the down projection
    std::vector<int64_t> expert_tokens;  // a mixture of experts: tokens routed to each expert
    std::vector<uint32_t> neuron_fires;  // gate-first experts: tokens for which each neuron (e·n_ff + i) fired
};

struct SparseScratch {
    // `width`: the most inputs or outputs of a product by input beside the FFN's (n_embd without
    // attention's, HParams::sparse_attn_input).
    SparseScratch(int32_t n_ff, int32_t max_rank, int32_t n_embd, int32_t n_layer, int32_t width);
    std::vector<float> h;          // [max_rank] predictor hidden layer
    std::vector<float> score;      // [n_ff] predictor output, or |act(gate)| of a gate-first FFN
    std::vector<float> gate;       // [n_ff] a gate-first FFN: every neuron's gate product
    std::vector<int32_t> active;   // ids of the active neurons, ascending (capacity n_ff)
    // a, coef, a_q8, token_coef and down_rows also serve products by input (sparse_ffn.h), and
    // hold the larger of n_ff and `width`.
    std::vector<float> a;          // [n_ff rounded up to 32] activation values (0 for inactive neurons)
    std::vector<float> coef;       // [n_ff] the value each active neuron's row is scaled by
    std::vector<int32_t> down_rows;  // the CPU's active neurons with a non-zero coefficient (capacity n_ff)
    std::vector<uint8_t> a_q8;     // a quantized to Q8_0, for Q4_0 down rows
    tensor::PreparedActivations prepared_x;  // the FFN input, in the gate/up rows' dot type
    std::vector<SparseLayerStats> stats;     // [n_layer]

    // Hybrid execution (the execution plan says which neurons the device holds):
    std::vector<int32_t> hot_active;        // active neurons resident on the device (capacity n_ff)
    std::vector<float> g, v;                // [n_ff] the device's dot products for hot_active
    std::vector<float> hot_coef;            // [n_ff] coefficients of hot_active, in that order
    std::vector<float> y_device;            // [n_embd] the device's share of the FFN output

    // Everything on the CPU: the FFN in fixed chunks of neurons, each with its share of the output.
    std::vector<int64_t> chunk_begin;  // [n_chunks + 1] where each chunk's neurons start in `active`
    std::vector<int64_t> chunk_rows;   // [n_chunks] its down rows, in down_rows from chunk_begin
    std::vector<float> partial;        // [n_chunks][n_embd] its share of the output
    std::vector<float> token_coef;     // [8][n_ff] a prompt's tokens' down coefficients, eight at a time

    // Input sparsity (SparseFfnWeights::gate_t, attention's products by input):
    std::vector<float> x_kept;          // [width] one token's FFN input, zero where skipped
    std::vector<float> chunk_sum;       // [width / 512][max(n_ff, width)] each chunk of inputs' share of the products
    std::vector<int64_t> inputs_kept;   // [n_tokens] each token's kept inputs
    std::vector<float> score_order;     // [n_ff] score, partly ordered to find the k-th largest
};

}  // namespace ember::model

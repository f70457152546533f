#pragma once
// Buffers for a batch of up to n_batch tokens, sized once (the per-token path allocates
// nothing). Each buffer has one job and its size comes from one table (scratch.cpp), which
// also gives the bytes a device needs for the same work.

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/expert_ffn.h"
#include "model/hparams.h"
#include "model/sparse_scratch.h"
#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace ember::model {

struct Scratch {
    Scratch(const HParams& hp, int32_t n_batch, int32_t n_ctx, int32_t n_threads);

    int32_t n_batch;
    tensor::ThreadPool pool;
    tensor::PreparedActivations prepared;  // a product's input in its weights' dot-product type
    // Per batch token ([n_batch][...]):
    std::vector<float> x;         // [n_embd] the residual stream
    std::vector<float> attn_in;   // [n_embd] attention's normalized input
    std::vector<float> qkv;       // [n_embd_q + 2 n_embd_gqa] a fused QKV product (architectures with one)
    std::vector<float> q;         // [n_embd_q] queries, after RoPE
    std::vector<float> k;         // [n_embd_gqa] keys, after RoPE
    std::vector<float> v;         // [n_embd_gqa] values
    std::vector<float> attn;      // [n_embd_q] attention's result, before the output product
    std::vector<float> attn_out;  // [n_embd] the attention sub-layer's output
    std::vector<float> ffn_in;    // [n_embd] the FFN's normalized input
    std::vector<float> ffn_gate;  // [n_ff] dense FFN: gate · x
    std::vector<float> ffn_up;    // [n_ff] dense FFN: up · x
    std::vector<float> ffn_act;   // [n_ff] dense FFN: the activation of the two
    std::vector<float> ffn_out;   // [n_embd] the FFN's output
    std::vector<float> kept_inputs;  // [max(n_embd, n_embd_q)] attention's products by input: their kept inputs
    std::vector<float> out_norm;  // [n_embd] the LM head's normalized input
    std::vector<float> rope;      // [head_dim] the token's RoPE angles (tensor::rope_angles)
    std::vector<float> rope_swa;  // [head_dim] the same for sliding-window layers' own base
    // Mixture-of-experts models only:
    std::vector<float> router;          // [n_expert] the router's logits, then its gating values
    std::vector<int32_t> expert_order;  // [n_expert] experts by gating value, for the top-k
    std::vector<int32_t> expert_id;     // [n_expert_used] the experts the token is routed to
    std::vector<float> expert_weight;   // [n_expert_used] and their renormalized weights
    std::vector<int32_t> expert_rows;   // [1] the batch rows one expert computes
    std::vector<float> expert_in;       // [n_embd] those rows' FFN inputs, gathered
    std::vector<float> expert_out;      // [n_embd] and that expert's outputs for them
    std::vector<int32_t> expert_active;  // one token's neurons whose gate fired (capacity n_ff)
    // One token's routed experts split between the CPU and a device: whole experts
    // (Executor::token_experts), or gate-first experts' single neurons (model/expert_ffn.h,
    // ExpertSplitBuffers, the split_* buffers).
    std::vector<RoutedExpert> routed;     // capacity n_expert_used
    std::vector<float> routed_gate;       // [n_expert_used · n_ff] the device's gate products
    std::vector<float> routed_up;         // [n_expert_used · n_ff] its up products
    std::vector<float> routed_act;        // [n_expert_used · n_ff] and their activations
    std::vector<float> routed_out;        // [n_expert_used · n_embd] each expert's output
    std::array<tensor::PreparedActivations, 2> device_x;  // the token's input for the gates' and the ups' form
    std::vector<tensor::PreparedActivations> device_act;  // [n_expert_used] each resident expert's activations
    std::vector<float> split_gate;        // [n_expert_used · n_ff]
    std::vector<float> split_act;         // [n_expert_used · n_ff]
    std::vector<int32_t> split_cold;      // capacity n_expert_used · n_ff
    std::vector<int64_t> split_cold_end;  // capacity n_expert_used
    std::vector<int32_t> split_hot;       // capacity n_expert_used · n_ff
    std::vector<int32_t> split_ids;       // capacity n_expert_used · n_ff
    std::vector<float> split_v;           // [n_expert_used · n_ff]
    std::vector<float> split_coef;        // [n_expert_used · n_ff]
    std::vector<float> split_device_out;  // [n_embd]
    std::vector<SparseLayerStats> expert_stats;  // [n_layer] neurons computed in the routed experts
    // Per worker thread ([n_threads][...]):
    std::vector<float> scores;    // [n_ctx] one head's attention weights
    std::vector<uint16_t> half;   // [max(head_dim, n_ctx)] F16 staging of one head
    std::unique_ptr<SparseScratch> sparse;  // models with predictors only

    // The bytes of the buffers above (the thread pool's and the sparse FFN's aside): what a
    // device needs beside its weights to compute the same batch.
    uint64_t bytes() const { return bytes_; }

private:
    uint64_t bytes_ = 0;
};

// The bytes of Scratch's buffers (the thread pool's and the sparse FFN's aside): per batch token,
// and per worker thread for a context of n_ctx. A Scratch of n_batch tokens and n_threads
// workers holds per_token · n_batch + per_thread · n_threads; the fit estimate counts the same.
uint64_t scratch_bytes_per_token(const HParams& hp);
uint64_t scratch_bytes_per_thread(const HParams& hp, int32_t n_ctx);

}  // namespace ember::model

#pragma once
// Shared building blocks of the transformer layers: norms, RoPE, attention over the KV cache,
// gated FFN activations. Every architecture file composes these.

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "backend/device.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/sparse_scratch.h"
#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace ember::model {

// Buffers for a batch of up to n_batch tokens, sized once (the per-token path allocates nothing).
struct Scratch {
    Scratch(const HParams& hp, int32_t n_batch, int32_t n_ctx, int32_t n_threads);

    int32_t n_batch;
    tensor::ThreadPool pool;
    tensor::PreparedActivations prepared;
    std::vector<float> x;       // [n_batch][n_embd] residual stream
    std::vector<float> xn;      // [n_batch][n_embd] normalized input of a sub-layer
    std::vector<float> q;       // [n_batch][n_embd]
    std::vector<float> k;       // [n_batch][n_embd_gqa]
    std::vector<float> v;       // [n_batch][n_embd_gqa]
    std::vector<float> attn;    // [n_batch][n_embd] attention output before Wo
    std::vector<float> out;     // [n_batch][n_embd] sub-layer output
    std::vector<float> gate;    // [n_batch][n_ff]
    std::vector<float> up;      // [n_batch][n_ff]
    std::vector<float> qkv;     // [n_batch][n_embd + 2 n_embd_gqa], architectures with a fused QKV only
    std::vector<float> scores;  // [n_threads][n_ctx] attention weights, one row per worker slot
    std::vector<uint16_t> half; // [n_threads][max(head_dim, n_ctx)] F16 staging per worker slot
    std::vector<float> rope;    // [n_batch][head_dim] the batch's RoPE angles (tensor::rope_angles)
    std::unique_ptr<SparseScratch> sparse;  // only for models with predictors
};

// y = w · x for n tokens ([n][w.n_cols] -> [n][w.n_rows]): on the session's device when the
// placement put w there, else on the CPU.
void linear(const tensor::WeightView& w, const float* x, int64_t n, float* y, Scratch& s);

// One product of linear_shared(): y = w · x.
struct Product {
    const tensor::WeightView& w;
    float* y;
};
// linear() for products of one input (a layer's Q, K and V): when the device holds them all and
// they read the input in the same form, they are queued together, one round trip for all.
void linear_shared(std::initializer_list<Product> products, const float* x, int64_t n, Scratch& s);

// The RoPE angles of positions pos0 .. pos0 + n - 1 into s.rope, shared by every layer.
void rope_angles(const HParams& hp, int32_t pos0, int32_t n, Scratch& s);

// A layer's attention sub-layer for n tokens of x: out = [x +] wo · attention(rope(qkv · norm(x))),
// with K and V appended to the cache (out may be x). On the session's device, in one round trip,
// when it holds the layer's matrices and the KV cache; else on the CPU, each product where the
// placement put it. Uses s.q, s.k, s.v, s.qkv, s.attn and s.out; s.rope must hold the batch's angles.
void attention_sublayer(const backend::AttentionLayer& layer, const HParams& hp, int32_t il, int32_t n, KvCache& kv,
                        const float* x, float* out, Scratch& s);

// Writes the batch's K and V rows into the cache at positions n_past.., then computes causal
// attention for each token and head into s.attn. GQA: head h reads KV head h / (n_head / n_head_kv).
// When the session's device holds the KV cache, both happen there.
void attention(const HParams& hp, int32_t il, int32_t n_tokens, KvCache& kv, Scratch& s);

// up[i] = the activation of (gate[i], up[i]) for n elements (gate unused for FfnGate::Relu).
void ffn_activation(FfnGate act, const float* gate, float* up, int64_t n);

void add_in_place(float* x, const float* y, int64_t n);

// Dequantizes embedding rows for the given tokens into out [n][n_embd]; ids are checked.
void embed_tokens(const tensor::WeightView& table, const int32_t* tokens, int32_t n, float* out);

}  // namespace ember::model

#include "model/scratch.h"

#include <algorithm>

namespace ember::model {
namespace {

// Each buffer's length: per batch token or per worker thread, in elements.
struct BufferSize {
    std::vector<float> Scratch::*f32 = nullptr;
    std::vector<uint16_t> Scratch::*f16 = nullptr;
    int64_t per_token = 0;
    int64_t per_thread = 0;
    std::vector<int32_t> Scratch::*i32 = nullptr;
};

std::vector<BufferSize> buffer_table(const HParams& hp, int32_t n_ctx) {
    const int64_t n_embd = hp.n_embd, n_q = hp.n_embd_q(), n_gqa = hp.n_embd_gqa(), n_ff = hp.n_ff;
    using S = Scratch;
    return {
        {&S::x, nullptr, n_embd, 0},
        {&S::attn_in, nullptr, n_embd, 0},
        {&S::qkv, nullptr, hp.fused_qkv ? n_q + 2 * n_gqa : 0, 0},
        {&S::q, nullptr, n_q, 0},
        {&S::k, nullptr, n_gqa, 0},
        {&S::v, nullptr, n_gqa, 0},
        {&S::attn, nullptr, n_q, 0},
        {&S::attn_out, nullptr, n_embd, 0},
        {&S::ffn_in, nullptr, n_embd, 0},
        {&S::ffn_gate, nullptr, n_ff, 0},
        {&S::ffn_up, nullptr, n_ff, 0},
        {&S::ffn_act, nullptr, n_ff, 0},
        {&S::ffn_out, nullptr, n_embd, 0},
        {&S::kept_inputs, nullptr, hp.sparse_attn_input ? std::max(n_embd, n_q) : 0, 0},
        {&S::out_norm, nullptr, n_embd, 0},
        {&S::rope, nullptr, hp.head_dim(), 0},
        {&S::rope_swa, nullptr, hp.n_swa > 0 ? hp.head_dim() : 0, 0},
        {&S::router, nullptr, hp.n_expert, 0},
        {nullptr, nullptr, hp.n_expert, 0, &S::expert_order},
        {nullptr, nullptr, hp.n_expert_used, 0, &S::expert_id},
        {&S::expert_weight, nullptr, hp.n_expert_used, 0},
        {nullptr, nullptr, hp.moe() ? 1 : 0, 0, &S::expert_rows},
        {&S::expert_in, nullptr, hp.moe() ? n_embd : 0, 0},
        {&S::expert_out, nullptr, hp.moe() ? n_embd : 0, 0},
        {&S::scores, nullptr, 0, n_ctx},
        {nullptr, &S::half, 0, std::max<int64_t>(hp.head_dim(), n_ctx)},
    };
}

size_t element_bytes(const BufferSize& b) { return b.f16 ? sizeof(uint16_t) : sizeof(float); }

}  // namespace

uint64_t scratch_bytes_per_token(const HParams& hp) {
    uint64_t bytes = 0;
    for (const BufferSize& b : buffer_table(hp, 0)) bytes += uint64_t(b.per_token) * element_bytes(b);
    return bytes;
}

uint64_t scratch_bytes_per_thread(const HParams& hp, int32_t n_ctx) {
    uint64_t bytes = 0;
    for (const BufferSize& b : buffer_table(hp, n_ctx)) bytes += uint64_t(b.per_thread) * element_bytes(b);
    return bytes;
}

Scratch::Scratch(const HParams& hp, int32_t n_batch_, int32_t n_ctx, int32_t n_threads)
    : n_batch(n_batch_), pool(n_threads) {
    for (const BufferSize& b : buffer_table(hp, n_ctx)) {
        const size_t n = size_t(b.per_token * n_batch + b.per_thread * pool.size());
        if (b.f32) (this->*b.f32).resize(n);
        if (b.f16) (this->*b.f16).resize(n);
        if (b.i32) (this->*b.i32).resize(n);
        bytes_ += n * element_bytes(b);
    }
    prepared.reserve(n_batch, std::max({hp.n_embd, hp.n_embd_q(), hp.n_ff}));
    // PowerInfer's ReLU model families run as PowerInfer's runtime runs them, every other model
    // (SmallThinker's ReLU experts included) as upstream llama.cpp does: each is the reference its
    // files are checked against.
    const bool upstream = hp.ffn_gate == FfnGate::SiluPar || hp.ffn_gate == FfnGate::GeluPar || hp.moe();
    const tensor::Q8KScale scale = upstream ? tensor::Q8KScale::Upstream : tensor::Q8KScale::PowerInfer;
    prepared.set_q8_k_scale(scale);
    if (hp.moe()) {
        expert_active.reserve(size_t(hp.n_ff));
        const size_t neurons = size_t(hp.n_expert_used) * size_t(hp.n_ff);
        for (std::vector<float>* v : {&routed_gate, &routed_up, &routed_act}) v->resize(neurons);
        routed.reserve(size_t(hp.n_expert_used));
        routed_out.resize(size_t(hp.n_expert_used) * size_t(hp.n_embd));
        device_act.resize(size_t(hp.n_expert_used));
        for (tensor::PreparedActivations& p : device_x) p.reserve(1, hp.n_embd), p.set_q8_k_scale(scale);
        for (tensor::PreparedActivations& p : device_act) p.reserve(1, hp.n_ff), p.set_q8_k_scale(scale);
        if (hp.ffn_gate == FfnGate::ReluPar) {
            for (std::vector<float>* v : {&split_gate, &split_act, &split_v, &split_coef}) v->resize(neurons);
            for (std::vector<int32_t>* v : {&split_cold, &split_hot, &split_ids}) v->reserve(neurons);
            split_cold_end.reserve(size_t(hp.n_expert_used));
            split_device_out.resize(size_t(hp.n_embd));
        }
        expert_stats.resize(size_t(hp.n_layer));
        for (SparseLayerStats& l : expert_stats) {
            l.expert_tokens.assign(size_t(hp.n_expert), 0);
            // Only gate-first experts have neurons that may not fire.
            if (hp.ffn_gate == FfnGate::ReluPar) l.neuron_fires.assign(size_t(hp.n_expert) * size_t(hp.n_ff), 0);
        }
    }
    if (hp.sparse()) {
        const int64_t width = hp.sparse_attn_input ? std::max(hp.n_embd, hp.n_embd_q() + 2 * hp.n_embd_gqa()) : hp.n_embd;
        sparse = std::make_unique<SparseScratch>(hp.n_ff, hp.max_predictor_rank, hp.n_embd, hp.n_layer, int32_t(width));
        sparse->prepared_x.set_q8_k_scale(scale);
    }
}

}  // namespace ember::model

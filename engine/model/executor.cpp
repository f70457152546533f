#include "model/executor.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

#include "common/error.h"
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/expert_ffn.h"
#include "model/sparse_ffn.h"
#include "tensor/attention_head.h"
#include "tensor/kernels.h"
#include "tensor/layer_steps.h"
#include "tensor/rope.h"

namespace ember::model {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// An expert run whole on the device for m rows: every neuron computed, each of its rows read once.
void count_on_device(SparseLayerStats& stats, const ExpertWeights& w, int32_t m) {
    const int64_t neurons = int64_t(m) * w.gate.n_rows;
    const uint64_t bytes = expert_bytes(w);
    stats.active += neurons;
    stats.active_on_device += neurons;
    stats.bytes_read += bytes;
    stats.bytes_read_on_device += bytes;
}

}  // namespace

Executor::Executor(const HParams& hp, Scratch& s)
    : hp_(hp),
      s_(s),
      plan_(std::make_shared<const ExecutionPlan>(ExecutionPlan::cpu(hp.n_layer))),
      gate_thresholds_(size_t(hp.n_layer), 0.0f) {}

void Executor::set_gate_thresholds(std::vector<float> thresholds) { gate_thresholds_ = std::move(thresholds); }

void Executor::set_experts_on_demand(const std::vector<std::vector<uint8_t>>* on_demand) {
    experts_on_demand_ = on_demand;
    asked_.assign(size_t(hp_.n_expert), 0);
}

void Executor::set_plan(std::shared_ptr<const ExecutionPlan> plan, backend::DeviceStream* device) {
    plan_ = std::move(plan);
    device_ = device;
}

void Executor::begin_batch(const KvCache& kv, int32_t n) {
    n_ = n;
    pos0_ = kv.n_past();
    const int32_t hd = hp_.head_dim();
    const float* factors =
        hp_.rope_freq_factors_long && kv.n_ctx() > hp_.n_ctx_orig ? hp_.rope_freq_factors_long : hp_.rope_freq_factors;
    for (int32_t t = 0; t < n; ++t) {
        tensor::rope_angles(kv.n_past() + t, hd, hp_.rope_freq_base, hp_.rope_freq_scale, factors,
                            s_.rope.data() + size_t(t) * hd);
        if (hp_.n_swa > 0)
            tensor::rope_angles(kv.n_past() + t, hd, hp_.rope_freq_base_swa, hp_.rope_freq_scale_swa, nullptr,
                                s_.rope_swa.data() + size_t(t) * hd);
    }
}

// ---- Products ---------------------------------------------------------------------------

void Executor::linear(Where where, const tensor::WeightView& w, const float* x, int64_t n, float* y) {
    if (where == Where::Cpu) {
        tensor::matmul(s_.pool, w, x, n, y, s_.prepared);
        return;
    }
    s_.prepared.prepare(w.type, x, n, w.n_cols, &s_.pool);
    device_->begin_matmul(w, s_.prepared.row(0), s_.prepared.row_stride(), int32_t(n), y);
    device_->wait();
}

// ---- Attention ----------------------------------------------------------------------------

void Executor::attention_sublayer(int32_t il, const backend::AttentionLayer& layer, KvCache& kv, const float* x,
                                  float* out) {
    const AttentionOn on = plan_->layers[size_t(il)].attention;
    if (on == AttentionOn::DeviceSublayer) {
        device_->begin_attention_layer(il, layer, kv.n_past(), n_, s_.rope.data(), x, out);
        device_->wait();
        return;
    }
    const Where products = on == AttentionOn::DeviceProducts ? Where::Device : Where::Cpu;
    const int64_t n_embd = hp_.n_embd, n_q = hp_.n_embd_q(), n_gqa = hp_.n_embd_gqa();
    const int32_t hd = hp_.head_dim(), n = n_;
    tensor::normalize(layer.norm, x, s_.attn_in.data(), n_embd, n);
    emit("attn_norm", il, s_.attn_in.data(), n_embd);
    const float kept_above = hp_.sparse_attn_input ? input_sparsity_.attn_in[size_t(il)] : 0.0f;
    if (layer.qkv.size() == 1) {
        attention_product(il, products, layer.qkv[0], s_.attn_in.data(), kept_above, s_.qkv.data());
        tensor::split_qkv(s_.qkv.data(), n, size_t(n_q), size_t(n_gqa), s_.q.data(), s_.k.data(), s_.v.data());
    } else if (products == Where::Device && tensor::activation_type(layer.qkv[0].type) == tensor::activation_type(layer.qkv[1].type) &&
               tensor::activation_type(layer.qkv[0].type) == tensor::activation_type(layer.qkv[2].type)) {
        // Q, K and V read the input in the same form: one upload, one round trip for the three.
        s_.prepared.prepare(layer.qkv[0].type, s_.attn_in.data(), n, n_embd, &s_.pool);
        float* dst[] = {s_.q.data(), s_.k.data(), s_.v.data()};
        for (size_t m = 0; m < 3; ++m)
            device_->begin_matmul(layer.qkv[m], s_.prepared.row(0), s_.prepared.row_stride(), n, dst[m]);
        device_->wait();
    } else {
        attention_product(il, products, layer.qkv[0], s_.attn_in.data(), kept_above, s_.q.data());
        attention_product(il, products, layer.qkv[1], s_.attn_in.data(), kept_above, s_.k.data());
        attention_product(il, products, layer.qkv[2], s_.attn_in.data(), kept_above, s_.v.data());
    }
    if (layer.bias[0]) {
        for (int32_t t = 0; t < n; ++t) {
            add_in_place(s_.q.data() + size_t(t) * n_q, layer.bias[0], n_q);
            add_in_place(s_.k.data() + size_t(t) * n_gqa, layer.bias[1], n_gqa);
            add_in_place(s_.v.data() + size_t(t) * n_gqa, layer.bias[2], n_gqa);
        }
    }
    if (layer.qk_norm[0]) {
        // Every head's row is its own RMSNorm row.
        tensor::rms_norm(s_.q.data(), layer.qk_norm[0], s_.q.data(), hd, int64_t(n) * hp_.n_head, hp_.norm_eps);
        tensor::rms_norm(s_.k.data(), layer.qk_norm[1], s_.k.data(), hd, int64_t(n) * hp_.n_head_kv, hp_.norm_eps);
    }
    const float* rope = hp_.swa_layer(il) ? s_.rope_swa.data() : s_.rope.data();
    if (hp_.rope_layer(il)) {
        for (int32_t t = 0; t < n; ++t) {
            const float* angles = rope + size_t(t) * hd;
            tensor::rope_rotate(s_.q.data() + size_t(t) * n_q, hp_.n_head, hd, angles, layer.pairs);
            tensor::rope_rotate(s_.k.data() + size_t(t) * n_gqa, hp_.n_head_kv, hd, angles, layer.pairs);
        }
    }
    emit("q", il, s_.q.data(), n_q);
    emit("k", il, s_.k.data(), n_gqa);
    emit("v", il, s_.v.data(), n_gqa);
    cpu_attention(il, kv);
    emit("kqv_out", il, s_.attn.data(), n_q);
    attention_product(il, products, layer.wo, s_.attn.data(),
                      hp_.sparse_attn_input ? input_sparsity_.attn_out[size_t(il)] : 0.0f, s_.attn_out.data());
    emit("attn_out", il, s_.attn_out.data(), n_embd);
    for (int64_t i = 0; i < n * n_embd; ++i) out[i] = layer.residual ? x[i] + s_.attn_out[size_t(i)] : s_.attn_out[size_t(i)];
}

// With its inputs' sparsity (HParams::sparse_attn_input) the product is laid out by input and
// reads the rows of the inputs above `threshold` alone, on the CPU (the plan keeps such attention
// there).
void Executor::attention_product(int32_t il, Where where, const tensor::WeightView& w, const float* x, float threshold,
                                 float* y) {
    if (!hp_.sparse_attn_input) return linear(where, w, x, n_, y);
    SparseScratch& ss = *s_.sparse;
    product_of_large_inputs(w, x, n_, threshold, s_.kept_inputs.data(), y, s_.pool, ss);
    for (int64_t kept : ss.inputs_kept) ss.stats[size_t(il)].attention_bytes_read += uint64_t(kept) * w.row_bytes;
}

// Stores the batch's K and V rows at positions n_past.., then attends each token and head
// into s.attn. GQA: head h reads KV head h / (n_head / n_head_kv).
void Executor::cpu_attention(int32_t il, KvCache& kv) {
    const int32_t hd = hp_.head_dim(), n_gqa = hp_.n_embd_gqa(), pos0 = kv.n_past(), n = n_;
    const tensor::KernelTable& kern = tensor::kernels();
    for (int32_t t = 0; t < n; ++t) {
        kern.f32_to_f16(s_.k.data() + size_t(t) * n_gqa, kv.k(il, pos0 + t), n_gqa);
        kern.f32_to_f16(s_.v.data() + size_t(t) * n_gqa, kv.v(il, pos0 + t), n_gqa);
    }
    const int32_t group = hp_.n_head / hp_.n_head_kv;
    // RoPE's attention factor scales Q's and K's rotated values, so their products by its square.
    const float kq_scale = (hp_.attn_scale > 0.0f ? hp_.attn_scale : 1.0f / std::sqrt(float(hd))) *
                           hp_.rope_attn_factor * hp_.rope_attn_factor;
    // A sliding-window layer's token at position p sees positions p - n_swa + 1 .. p.
    const int32_t window = hp_.swa_layer(il) ? hp_.n_swa : INT32_MAX;
    const size_t half_stride = s_.half.size() / size_t(s_.pool.size());
    const size_t score_stride = s_.scores.size() / size_t(s_.pool.size());
    s_.pool.run(int64_t(n) * hp_.n_head, [&](int64_t task, int thread) {
        const int32_t t = int32_t(task / hp_.n_head), h = int32_t(task % hp_.n_head);
        const int32_t n_keys = pos0 + t + 1, first = std::max(0, n_keys - window);
        const size_t kv_offset = size_t(first) * size_t(n_gqa) + size_t(h / group) * size_t(hd);
        tensor::attend_head(s_.q.data() + size_t(t) * hp_.n_embd_q() + size_t(h) * hd, kv.k(il, 0) + kv_offset,
                            kv.v(il, 0) + kv_offset, size_t(n_gqa), n_keys - first, hd, kq_scale,
                            s_.half.data() + size_t(thread) * half_stride,
                            s_.scores.data() + size_t(thread) * score_stride,
                            s_.attn.data() + size_t(t) * hp_.n_embd_q() + size_t(h) * hd, hp_.attn_softcap);
    });
}

// ---- FFN ----------------------------------------------------------------------------------

void Executor::dense_ffn(int32_t il, const DenseFfnWeights& w, const float* x, float* out) {
    const int64_t n = n_, n_ff = w.up.n_rows;
    const bool gated = w.gate.n_rows > 0;
    if (plan_->layers[size_t(il)].ffn == Where::Cpu) {
        if (gated) tensor::matmul(s_.pool, w.gate, x, n, s_.ffn_gate.data(), s_.prepared);
        tensor::matmul(s_.pool, w.up, x, n, s_.ffn_up.data(), s_.prepared);
    } else {
        // Gate and up read the same prepared input: one round trip for both.
        s_.prepared.prepare(w.up.type, x, n, w.up.n_cols, &s_.pool);
        if (gated) device_->begin_matmul(w.gate, s_.prepared.row(0), s_.prepared.row_stride(), int32_t(n), s_.ffn_gate.data());
        device_->begin_matmul(w.up, s_.prepared.row(0), s_.prepared.row_stride(), int32_t(n), s_.ffn_up.data());
        device_->wait();
    }
    if (gated) emit("ffn_gate", il, s_.ffn_gate.data(), n_ff);
    emit("ffn_up", il, s_.ffn_up.data(), n_ff);
    ffn_activation(hp_.ffn_gate, s_.ffn_gate.data(), s_.ffn_up.data(), s_.ffn_act.data(), n * n_ff);
    emit("ffn_act", il, s_.ffn_act.data(), n_ff);
    linear(plan_->layers[size_t(il)].ffn, w.down, s_.ffn_act.data(), n, out);
}

void Executor::route(int32_t il, const tensor::WeightView& router, const MoeFfnWeights& experts, const float* x) {
    const int32_t n_expert = hp_.n_expert, k = hp_.n_expert_used;
    tensor::matmul(s_.pool, router, x, n_, s_.router.data(), s_.prepared);
    emit("ffn_moe_logits", il, s_.router.data(), n_expert);
    int32_t* order = s_.expert_order.data();
    for (int32_t t = 0; t < n_; ++t) {
        float* p = s_.router.data() + size_t(t) * n_expert;
        if (hp_.expert_gating == ExpertGating::Softmax) {
            const float top = *std::max_element(p, p + n_expert);
            float sum = 0.0f;
            for (int32_t e = 0; e < n_expert; ++e) sum += p[e] = std::exp(p[e] - top);
            for (int32_t e = 0; e < n_expert; ++e) p[e] /= sum;
        } else {
            for (int32_t e = 0; e < n_expert; ++e) p[e] = 1.0f / (1.0f + std::exp(-p[e]));
        }
        for (int32_t e = 0; e < n_expert; ++e) order[e] = e;
        std::partial_sort(order, order + k, order + n_expert, [&](int32_t a, int32_t b) { return p[a] > p[b]; });
        int32_t* ids = s_.expert_id.data() + size_t(t) * k;
        float* weights = s_.expert_weight.data() + size_t(t) * k;
        float sum = 0.0f;
        for (int32_t j = 0; j < k; ++j) sum += weights[j] = p[ids[j] = order[j]];
        // As llama.cpp: the sum clamped to F16's smallest normal, so all-zero sigmoids divide safely.
        sum = std::max(sum, 6.103515625e-5f);
        for (int32_t j = 0; j < k; ++j) weights[j] /= sum;
    }
    if (experts_on_demand_) ask_for_experts(il, experts);
}

// The pages of the picked experts that live in the file are read from now on, while the layer's
// attention (or the experts before them) run.
void Executor::ask_for_experts(int32_t il, const MoeFfnWeights& experts) {
    const std::vector<uint8_t>& on_demand = (*experts_on_demand_)[size_t(il)];
    std::fill(asked_.begin(), asked_.end(), 0);
    for (int32_t j = 0; j < n_ * hp_.n_expert_used; ++j) {
        const int32_t e = s_.expert_id[size_t(j)];
        if (!on_demand[size_t(e)] || asked_[size_t(e)]) continue;
        asked_[size_t(e)] = 1;
        const ExpertWeights w = expert_weights(experts, hp_, e);
        for (const tensor::WeightView* m : {&w.gate, &w.up, &w.down}) gguf::prefetch_pages(m->data, size_t(matrix_bytes(*m)));
    }
}

void Executor::moe_ffn(int32_t il, const MoeFfnWeights& w, const float* x, float* out) {
    const auto start = Clock::now();
    const int64_t n_embd = hp_.n_embd, n_ff = hp_.n_ff;
    const int32_t k = hp_.n_expert_used;
    SparseLayerStats& stats = s_.expert_stats[size_t(il)];
    const LayerPlan& layer = plan_->layers[size_t(il)];
    // Gate-first experts with neurons on the device: a token alone splits its experts between
    // the two; a prompt's run on the CPU, which holds every neuron too.
    if (n_ == 1 && !layer.hot.empty()) {
        list_routed(w, stats);
        const ExpertWork work = split_experts(
            s_.routed, layer.hot.data(), il, x, out, *device_, s_.pool,
            {s_.split_gate.data(), s_.split_act.data(), s_.ffn_up.data(), s_.expert_out.data(), s_.split_cold, s_.split_cold_end,
             s_.split_hot, s_.split_ids, s_.split_v.data(), s_.split_coef.data(), s_.split_device_out.data(), s_.prepared});
        stats.active += work.neurons;
        stats.bytes_read += work.bytes;
        stats.active_on_device += work.neurons_on_device;
        stats.bytes_read_on_device += work.bytes_on_device;
        for (size_t j = 0; j < s_.routed.size(); ++j)
            count_fires(stats, s_.routed[j].first_row, s_.split_act.data() + j * size_t(n_ff), 1);
        stats.tokens += 1;
        stats.ffn_ms += ms_between(start, Clock::now());
        return;
    }
    if (n_ == 1 && !layer.experts.empty()) return token_experts(il, w, x, out);
    std::fill(out, out + size_t(n_) * n_embd, 0.0f);
    for (int32_t e = 0; e < hp_.n_expert; ++e) {
        int32_t m = 0;
        for (int32_t t = 0; t < n_; ++t) {
            const int32_t* ids = &s_.expert_id[size_t(t) * k];
            if (std::find(ids, ids + k, e) == ids + k) continue;
            std::copy_n(x + size_t(t) * n_embd, n_embd, s_.expert_in.data() + size_t(m) * n_embd);
            s_.expert_rows[size_t(m++)] = t;
        }
        if (m == 0) continue;
        stats.expert_tokens[size_t(e)] += m;
        const ExpertWeights expert = expert_weights(w, hp_, e);
        if (!layer.experts.empty() && layer.experts[size_t(e)]) {
            device_expert(expert, m);
            count_on_device(stats, expert, m);
        } else {
            const ExpertWork work =
                run_expert(expert, hp_.ffn_gate, s_.expert_in.data(), m, s_.expert_out.data(), s_.pool,
                           {s_.ffn_gate.data(), s_.ffn_up.data(), s_.ffn_act.data(), s_.expert_active, s_.prepared});
            stats.active += work.neurons;
            stats.bytes_read += work.bytes;
        }
        count_fires(stats, int32_t(e * n_ff), s_.ffn_act.data(), m);
        for (int32_t i = 0; i < m; ++i) {
            const int32_t t = s_.expert_rows[size_t(i)];
            const int32_t* ids = &s_.expert_id[size_t(t) * k];
            const float weight = s_.expert_weight[size_t(t) * k + size_t(std::find(ids, ids + k, e) - ids)];
            float* y = out + size_t(t) * n_embd;
            const float* ye = s_.expert_out.data() + size_t(i) * n_embd;
            for (int64_t j = 0; j < n_embd; ++j) y[j] += weight * ye[j];
        }
    }
    stats.tokens += n_;
    stats.ffn_ms += ms_between(start, Clock::now());
}

// One token's routed experts into s_.routed, in expert order, each counted in stats.
void Executor::list_routed(const MoeFfnWeights& w, SparseLayerStats& stats) {
    const int32_t k = hp_.n_expert_used;
    s_.routed.clear();
    for (int32_t e = 0; e < hp_.n_expert; ++e) {
        const int32_t* it = std::find(s_.expert_id.data(), s_.expert_id.data() + k, e);
        if (it == s_.expert_id.data() + k) continue;
        s_.routed.push_back({expert_weights(w, hp_, e), int32_t(e * hp_.n_ff), s_.expert_weight[size_t(it - s_.expert_id.data())]});
        stats.expert_tokens[size_t(e)] += 1;
    }
}

// The device's experts run while the CPU computes the others: their gate and up products are
// queued together, the CPU's experts follow, one join; then their downs, one more. Two round trips
// a layer however many of the token's experts the device holds. Each expert's output keeps its
// own buffer and the weighted sum runs in expert order, as a batch sums them, so where the
// experts ran adds no difference of its own.
void Executor::token_experts(int32_t il, const MoeFfnWeights& w, const float* x, float* out) {
    const auto start = Clock::now();
    const int64_t n_embd = hp_.n_embd, n_ff = hp_.n_ff;
    SparseLayerStats& stats = s_.expert_stats[size_t(il)];
    const std::vector<uint8_t>& resident = plan_->layers[size_t(il)].experts;
    list_routed(w, stats);
    const auto on_device = [&](size_t j) { return resident[size_t(s_.routed[j].first_row / n_ff)] != 0; };
    const auto output = [&](size_t j) { return s_.routed_out.data() + j * size_t(n_embd); };
    // A layer's experts are slices of the same tensors, of one type each: the input is prepared
    // once for all gates and once for all ups (the same buffer where their forms agree), when
    // the device holds any of the token's experts.
    const ExpertWeights& first = s_.routed.front().w;
    tensor::PreparedActivations& xg = s_.device_x[0];
    tensor::PreparedActivations& xu =
        tensor::activation_type(first.up.type) == tensor::activation_type(first.gate.type) ? xg : s_.device_x[1];
    bool any_resident = false;
    for (size_t j = 0; j < s_.routed.size(); ++j) any_resident = any_resident || on_device(j);
    if (any_resident) {
        xg.prepare(first.gate.type, x, 1, n_embd, &s_.pool);
        if (&xu != &xg) xu.prepare(first.up.type, x, 1, n_embd, &s_.pool);
    }
    backend::DeviceJoin join(device_);
    for (size_t j = 0; j < s_.routed.size(); ++j) {
        if (!on_device(j)) continue;
        const ExpertWeights& e = s_.routed[j].w;
        device_->begin_matmul(e.gate, xg.row(0), xg.row_stride(), 1, s_.routed_gate.data() + j * size_t(n_ff));
        device_->begin_matmul(e.up, xu.row(0), xu.row_stride(), 1, s_.routed_up.data() + j * size_t(n_ff));
    }
    for (size_t j = 0; j < s_.routed.size(); ++j) {
        if (on_device(j)) continue;
        const ExpertWork work = run_expert(s_.routed[j].w, hp_.ffn_gate, x, 1, output(j), s_.pool,
                                           {s_.ffn_gate.data(), s_.ffn_up.data(), s_.ffn_act.data(), s_.expert_active, s_.prepared});
        stats.active += work.neurons;
        stats.bytes_read += work.bytes;
        count_fires(stats, s_.routed[j].first_row, s_.ffn_act.data(), 1);
    }
    join.wait();
    for (size_t j = 0; j < s_.routed.size(); ++j) {
        if (!on_device(j)) continue;
        const ExpertWeights& e = s_.routed[j].w;
        float* act = s_.routed_act.data() + j * size_t(n_ff);
        ffn_activation(hp_.ffn_gate, s_.routed_gate.data() + j * size_t(n_ff), s_.routed_up.data() + j * size_t(n_ff), act, n_ff);
        tensor::PreparedActivations& prepared = s_.device_act[j];
        prepared.prepare(e.down.type, act, 1, n_ff, &s_.pool);
        device_->begin_matmul(e.down, prepared.row(0), prepared.row_stride(), 1, output(j));
        count_on_device(stats, e, 1);
        count_fires(stats, s_.routed[j].first_row, act, 1);
    }
    join.wait();
    std::fill(out, out + n_embd, 0.0f);
    for (size_t j = 0; j < s_.routed.size(); ++j) {
        const float weight = s_.routed[j].weight;
        const float* ye = output(j);
        for (int64_t i = 0; i < n_embd; ++i) out[i] += weight * ye[i];
    }
    stats.tokens += 1;
    stats.ffn_ms += ms_between(start, Clock::now());
}

// The neurons of the expert at first_row.. that fired for m tokens' activations act ([m][n_ff]).
void Executor::count_fires(SparseLayerStats& stats, int32_t first_row, const float* act, int32_t m) const {
    if (stats.neuron_fires.empty()) return;
    uint32_t* fires = stats.neuron_fires.data() + first_row;
    for (int32_t t = 0; t < m; ++t)
        for (int64_t i = 0; i < hp_.n_ff; ++i) fires[i] += act[size_t(t) * size_t(hp_.n_ff) + size_t(i)] != 0.0f;
}

// A resident expert, whole, for the m gathered rows of s.expert_in into s.expert_out.
void Executor::device_expert(const ExpertWeights& w, int32_t m) {
    const int64_t n_ff = w.gate.n_rows;
    s_.prepared.prepare(w.gate.type, s_.expert_in.data(), m, w.gate.n_cols, &s_.pool);
    device_->begin_matmul(w.gate, s_.prepared.row(0), s_.prepared.row_stride(), m, s_.ffn_gate.data());
    if (tensor::activation_type(w.up.type) != tensor::activation_type(w.gate.type)) {
        device_->wait();
        s_.prepared.prepare(w.up.type, s_.expert_in.data(), m, w.up.n_cols, &s_.pool);
    }
    device_->begin_matmul(w.up, s_.prepared.row(0), s_.prepared.row_stride(), m, s_.ffn_up.data());
    device_->wait();
    ffn_activation(hp_.ffn_gate, s_.ffn_gate.data(), s_.ffn_up.data(), s_.ffn_act.data(), m * n_ff);
    linear(Where::Device, w.down, s_.ffn_act.data(), m, s_.expert_out.data());
}

void Executor::predictor(int32_t il, const SparseFfnWeights& w, const float* u, float* scores) {
    SparseScratch& ss = *s_.sparse;
    if (plan_->layers[size_t(il)].predictor == Where::Device) {
        device_->begin_predictor(w.fc1, w.fc2, u, 1, scores);
        device_->wait();
        return;
    }
    tensor::matmul(s_.pool, w.fc1, u, 1, ss.h.data(), s_.prepared);
    for (int64_t r = 0; r < w.fc1.n_rows; ++r) ss.h[size_t(r)] = std::max(ss.h[size_t(r)], 0.0f);
    tensor::matmul(s_.pool, w.fc2, ss.h.data(), 1, scores, s_.prepared);
}

void Executor::sparse_ffn(int32_t il, const SparseFfnWeights& w, const float* u, const float* x, float* out) {
    SparseScratch& ss = *s_.sparse;
    const LayerPlan& layer = plan_->layers[size_t(il)];
    const uint8_t* hot = layer.hot.empty() ? nullptr : layer.hot.data();
    const int64_t n_embd = hp_.n_embd;
    if (w.gate_first() && n_ > 1 && !hot) return gate_first_batch(il, w, x, out);
    for (int32_t t = 0; t < n_; ++t) {
        const auto start = Clock::now();
        const float* xt = x + size_t(t) * n_embd;
        if (w.gate_first()) {
            if (w.gate_t.n_rows) {
                product_of_large_inputs(w.gate_t, xt, 1, input_sparsity_.ffn_in[size_t(il)], ss.x_kept.data(),
                                        ss.gate.data(), s_.pool, ss);
                score_gate_products(hp_.ffn_gate, ss.gate.data(), hp_.n_ff, ss);
            } else {
                gate_scores(w, hp_.ffn_gate, xt, s_.pool, s_.prepared, ss);
            }
            select_gate_first(il, w, 0, hot);
        } else {
            predictor(il, w, u + size_t(t) * n_embd, ss.score.data());
            select_active(il, w, hp_.ffn_gate, hp_.sparse_threshold, hot, ss);
        }
        const auto predicted = Clock::now();
        float* y = out + size_t(t) * n_embd;
        if (ss.hot_active.empty())
            cpu_sparse_ffn(w, hp_.ffn_gate, xt, y, s_.pool, ss);
        else
            split_sparse_ffn(il, w, hp_.ffn_gate, xt, y, *device_, s_.pool, ss);
        emit("ffn_act", il, ss.a.data(), hp_.n_ff, t, 1);
        SparseLayerStats& stats = ss.stats[size_t(il)];
        stats.predictor_ms += ms_between(start, predicted);
        stats.ffn_ms += ms_between(predicted, Clock::now());
    }
}

// With the gate read by input, the layer's count of neurons; else those whose |act(gate)|
// exceeds the layer's threshold (with 0, ReLU's zeros are skipped).
void Executor::select_gate_first(int32_t il, const SparseFfnWeights& w, int32_t t, const uint8_t* hot) {
    SparseScratch& ss = *s_.sparse;
    if (w.gate_t.n_rows)
        select_active(il, w, hp_.ffn_gate, score_of_kept(ss, hp_.n_ff, input_sparsity_.neurons_kept[size_t(il)]), hot, ss,
                      ss.inputs_kept[size_t(t)]);
    else
        select_active(il, w, hp_.ffn_gate, std::nextafter(gate_thresholds_[size_t(il)], INFINITY), hot, ss);
}

// Every token's gate and up products come from two batch products, whose rows stay in cache while
// the tokens pass, rather than one token's scattered up rows at a time; the down rows of the
// tokens' active neurons are then read once for several tokens. The products run the one-token
// path's dot kernel on the same prepared input and the down sums keep its order, so each token's
// FFN output is exactly what it is for the token alone.
void Executor::gate_first_batch(int32_t il, const SparseFfnWeights& w, const float* x, float* out) {
    SparseScratch& ss = *s_.sparse;
    const int64_t n_ff = hp_.n_ff;
    const auto start = Clock::now();
    if (w.gate_t.n_rows)  // ffn_act holds the kept inputs until the activations take its place
        product_of_large_inputs(w.gate_t, x, n_, input_sparsity_.ffn_in[size_t(il)], s_.ffn_act.data(), s_.ffn_gate.data(),
                                s_.pool, ss);
    else
        tensor::matmul(s_.pool, w.gate, x, n_, s_.ffn_gate.data(), s_.prepared);
    tensor::matmul(s_.pool, w.up, x, n_, s_.ffn_up.data(), s_.prepared);
    SparseLayerStats& stats = ss.stats[size_t(il)];
    stats.predictor_ms += ms_between(start, Clock::now());
    const auto down_start = Clock::now();
    for (int32_t t = 0; t < n_; ++t) {
        const float* g = s_.ffn_gate.data() + size_t(t) * size_t(n_ff);
        const float* u = s_.ffn_up.data() + size_t(t) * size_t(n_ff);
        float* a = s_.ffn_act.data() + size_t(t) * size_t(n_ff);
        score_gate_products(hp_.ffn_gate, g, n_ff, ss);
        select_gate_first(il, w, t, nullptr);
        std::fill(a, a + n_ff, 0.0f);
        for (int32_t i : ss.active) a[i] = ffn_activation_value(hp_.ffn_gate, g[i], u[i]);
        emit("ffn_act", il, a, n_ff, t, 1);
    }
    product_by_inputs_batch(w.down_t, s_.ffn_act.data(), n_, out, s_.pool, ss);
    stats.ffn_ms += ms_between(down_start, Clock::now());
}

// ---- LM head ------------------------------------------------------------------------------

void Executor::set_sparse_lm_head(const LmHeadProfiler* profiler) {
    profiler_ = profiler;
    lm_head_scratch_ = profiler ? std::make_unique<SparseLmHeadScratch>(*profiler, hp_.n_embd) : nullptr;
}

void Executor::lm_head(const tensor::WeightView& w, const float* x, int32_t n, float* logits) {
    // As PowerInfer's runtime: one row of logits, on the CPU.
    if (profiler_ && n == 1 && plan_->lm_head == Where::Cpu)
        lm_head_rows_ += sparse_lm_head(s_.pool, w, *profiler_, x, logits, *lm_head_scratch_, s_.prepared);
    else {
        linear(plan_->lm_head, w, x, n, logits);
        lm_head_rows_ += int64_t(n) * w.n_rows;
    }
    lm_head_tokens_ += n;
    emit("result_output", -1, logits, w.n_rows, n_ - n, n);
}

}  // namespace ember::model

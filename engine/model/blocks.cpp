#include "model/blocks.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "backend/layer_steps.h"
#include "common/error.h"
#include "tensor/attention_head.h"
#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/rope.h"
#include "tensor/quantize.h"

namespace ember::model {

Scratch::Scratch(const HParams& hp, int32_t n_batch_, int32_t n_ctx, int32_t n_threads)
    : n_batch(n_batch_), pool(n_threads) {
    const size_t b = size_t(n_batch);
    x.resize(b * hp.n_embd);
    xn.resize(b * hp.n_embd);
    q.resize(b * hp.n_embd);
    k.resize(b * hp.n_embd_gqa());
    v.resize(b * hp.n_embd_gqa());
    attn.resize(b * hp.n_embd);
    out.resize(b * hp.n_embd);
    gate.resize(b * hp.n_ff);
    up.resize(b * hp.n_ff);
    if (hp.fused_qkv) qkv.resize(b * (hp.n_embd + 2 * hp.n_embd_gqa()));
    scores.resize(size_t(pool.size()) * n_ctx);
    half.resize(size_t(pool.size()) * std::max(hp.head_dim(), n_ctx));
    rope.resize(b * hp.head_dim());
    prepared.reserve(n_batch, std::max(hp.n_embd, hp.n_ff));
    if (hp.max_predictor_rank > 0)
        sparse = std::make_unique<SparseScratch>(hp.n_ff, hp.max_predictor_rank, hp.n_embd, hp.n_layer);
}

void linear(const tensor::WeightView& w, const float* x, int64_t n, float* y, Scratch& s) {
    backend::Device* device = s.sparse ? s.sparse->device : nullptr;
    if (device && device->holds(w)) {
        s.prepared.prepare(w.type, x, n, w.n_cols);
        device->begin_matmul(w, s.prepared.row(0), s.prepared.row_stride(), int32_t(n), y);
        device->wait();
        return;
    }
    tensor::matmul(s.pool, w, x, n, y, s.prepared);
}

void linear_shared(std::initializer_list<Product> products, const float* x, int64_t n, Scratch& s) {
    backend::Device* device = s.sparse ? s.sparse->device : nullptr;
    const tensor::WeightView& first = products.begin()->w;
    const bool together = device && std::all_of(products.begin(), products.end(), [&](const Product& p) {
        return device->holds(p.w) && p.w.n_cols == first.n_cols &&
               tensor::activation_type(p.w.type) == tensor::activation_type(first.type);
    });
    if (!together) {
        for (const Product& p : products) linear(p.w, x, n, p.y, s);
        return;
    }
    s.prepared.prepare(first.type, x, n, first.n_cols);
    for (const Product& p : products) device->begin_matmul(p.w, s.prepared.row(0), s.prepared.row_stride(), int32_t(n), p.y);
    device->wait();
}

void rope_angles(const HParams& hp, int32_t pos0, int32_t n, Scratch& s) {
    const int32_t hd = hp.head_dim();
    for (int32_t t = 0; t < n; ++t)
        tensor::rope_angles(pos0 + t, hd, hp.rope_freq_base, hp.rope_freq_scale, s.rope.data() + size_t(t) * hd);
}

namespace {

bool device_holds(const backend::AttentionLayer& layer, backend::Device* device) {
    return device && device->holds_kv_cache() && device->holds(layer.wo) &&
           std::all_of(layer.qkv.begin(), layer.qkv.end(), [&](const tensor::WeightView& w) { return device->holds(w); });
}

}  // namespace

void attention_sublayer(const backend::AttentionLayer& layer, const HParams& hp, int32_t il, int32_t n, KvCache& kv,
                        const float* x, float* out, Scratch& s) {
    const int64_t n_embd = hp.n_embd, n_gqa = hp.n_embd_gqa();
    const int32_t hd = hp.head_dim();
    if (backend::Device* device = s.sparse ? s.sparse->device : nullptr; device_holds(layer, device)) {
        device->begin_attention_layer(il, layer, kv.n_past(), n, s.rope.data(), x, out);
        device->wait();
        return;
    }
    // The normalized input goes to s.attn, free until attention writes its result there.
    backend::normalize(layer.norm, x, s.attn.data(), n_embd, n);
    if (layer.qkv.size() == 3) {
        linear_shared({{layer.qkv[0], s.q.data()}, {layer.qkv[1], s.k.data()}, {layer.qkv[2], s.v.data()}}, s.attn.data(),
                      n, s);
    } else {
        linear(layer.qkv[0], s.attn.data(), n, s.qkv.data(), s);
        backend::split_qkv(s.qkv.data(), n, size_t(n_embd), size_t(n_gqa), s.q.data(), s.k.data(), s.v.data());
    }
    for (int32_t t = 0; t < n; ++t) {
        const float* angles = s.rope.data() + size_t(t) * hd;
        tensor::rope_rotate(s.q.data() + size_t(t) * n_embd, hp.n_head, hd, angles, layer.pairs);
        tensor::rope_rotate(s.k.data() + size_t(t) * n_gqa, hp.n_head_kv, hd, angles, layer.pairs);
    }
    attention(hp, il, n, kv, s);
    if (!layer.residual) {
        linear(layer.wo, s.attn.data(), n, out, s);
        return;
    }
    linear(layer.wo, s.attn.data(), n, s.out.data(), s);
    for (int64_t i = 0; i < n * n_embd; ++i) out[i] = x[i] + s.out[size_t(i)];
}

void attention(const HParams& hp, int32_t il, int32_t n_tokens, KvCache& kv, Scratch& s) {
    if (backend::Device* device = s.sparse ? s.sparse->device : nullptr; device && device->holds_kv_cache()) {
        device->begin_attention(il, kv.n_past(), n_tokens, s.q.data(), s.k.data(), s.v.data(), s.attn.data());
        device->wait();
        return;
    }
    const int32_t hd = hp.head_dim();
    const int32_t n_gqa = hp.n_embd_gqa();
    const int32_t pos0 = kv.n_past();
    const tensor::KernelTable& kern = tensor::kernels();
    for (int32_t t = 0; t < n_tokens; ++t) {
        kern.f32_to_f16(s.k.data() + size_t(t) * n_gqa, kv.k(il, pos0 + t), n_gqa);
        kern.f32_to_f16(s.v.data() + size_t(t) * n_gqa, kv.v(il, pos0 + t), n_gqa);
    }
    const int32_t group = hp.n_head / hp.n_head_kv;
    const float kq_scale = 1.0f / std::sqrt(float(hd));
    const size_t half_stride = s.half.size() / size_t(s.pool.size());
    const size_t score_stride = s.scores.size() / size_t(s.pool.size());
    s.pool.run(int64_t(n_tokens) * hp.n_head, [&](int64_t task, int thread) {
        const int32_t t = int32_t(task / hp.n_head);
        const int32_t h = int32_t(task % hp.n_head);
        const size_t kv_offset = size_t(h / group) * size_t(hd);
        tensor::attend_head(s.q.data() + size_t(t) * hp.n_embd + size_t(h) * hd, kv.k(il, 0) + kv_offset,
                            kv.v(il, 0) + kv_offset, size_t(n_gqa), pos0 + t + 1, hd, kq_scale,
                            s.half.data() + size_t(thread) * half_stride, s.scores.data() + size_t(thread) * score_stride,
                            s.attn.data() + size_t(t) * hp.n_embd + size_t(h) * hd);
    });
}

void ffn_activation(FfnGate act, const float* gate, float* up, int64_t n) {
    if (act == FfnGate::Relu) {
        for (int64_t i = 0; i < n; ++i) up[i] = ffn_activation_value(act, 0.0f, up[i]);
    } else {
        for (int64_t i = 0; i < n; ++i) up[i] = ffn_activation_value(act, gate[i], up[i]);
    }
}

void add_in_place(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void embed_tokens(const tensor::WeightView& table, const int32_t* tokens, int32_t n, float* out) {
    for (int32_t t = 0; t < n; ++t) {
        if (tokens[t] < 0 || tokens[t] >= table.n_rows)
            fail("token id " + std::to_string(tokens[t]) + " is outside the vocabulary (0.." +
                 std::to_string(table.n_rows - 1) + ")");
        tensor::dequantize_row(table.type, table.row(tokens[t]), out + size_t(t) * table.n_cols, table.n_cols);
    }
}

}  // namespace ember::model

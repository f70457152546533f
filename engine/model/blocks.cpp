#include "model/blocks.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"
#include "tensor/attention_head.h"
#include "tensor/fp16.h"
#include "tensor/kernels.h"
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
    rope_cos.resize(hp.head_dim() / 2);
    rope_sin.resize(hp.head_dim() / 2);
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

void rms_norm(const float* x, const float* w, float* out, int64_t n, int64_t n_tokens, float eps) {
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + t * n;
        float* ot = out + t * n;
        double sum = 0.0;
        // Squares in float, summed in double, as GGML does.
        for (int64_t i = 0; i < n; ++i) sum += double(xt[i] * xt[i]);
        const float scale = 1.0f / std::sqrt(float(sum / double(n)) + eps);
        for (int64_t i = 0; i < n; ++i) ot[i] = xt[i] * scale * w[i];
    }
}

void layer_norm(const float* x, const float* w, const float* b, float* out, int64_t n, int64_t n_tokens, float eps) {
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float* xt = x + t * n;
        float* ot = out + t * n;
        // Sums in double, as GGML does.
        double sum = 0.0;
        for (int64_t i = 0; i < n; ++i) sum += double(xt[i]);
        const float mean = float(sum / double(n));
        double sum2 = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            ot[i] = xt[i] - mean;
            sum2 += double(ot[i] * ot[i]);
        }
        const float scale = 1.0f / std::sqrt(float(sum2 / double(n)) + eps);
        for (int64_t i = 0; i < n; ++i) ot[i] = ot[i] * scale * w[i] + b[i];
    }
}

void rope(float* x, int32_t n_heads, int32_t head_dim, int32_t pos, const HParams& hp, RopePairs pairs, Scratch& s) {
    // theta_j = pos * scale * base^(-2j/d), built by repeated multiplication as GGML does, so
    // the angles round the same way as the reference implementation's.
    const float theta_scale = std::pow(hp.rope_freq_base, -2.0f / float(head_dim));
    float theta = float(pos) * hp.rope_freq_scale;
    for (int32_t j = 0; j < head_dim / 2; ++j) {
        s.rope_cos[j] = std::cos(theta);
        s.rope_sin[j] = std::sin(theta);
        theta *= theta_scale;
    }
    // Adjacent: pair j is (2j, 2j+1). NeoX: pair j is (j, j + head_dim/2).
    const int32_t stride = pairs == RopePairs::Adjacent ? 2 : 1;
    const int32_t offset = pairs == RopePairs::Adjacent ? 1 : head_dim / 2;
    for (int32_t h = 0; h < n_heads; ++h) {
        float* xh = x + size_t(h) * head_dim;
        for (int32_t j = 0; j < head_dim / 2; ++j) {
            float& a = xh[stride * j];
            float& b = xh[stride * j + offset];
            const float x0 = a, x1 = b;
            a = x0 * s.rope_cos[j] - x1 * s.rope_sin[j];
            b = x0 * s.rope_sin[j] + x1 * s.rope_cos[j];
        }
    }
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

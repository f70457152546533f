#include "model/expert_ffn.h"

#include <algorithm>

#include "common/error.h"
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/scattered_rows.h"
#include "tensor/kernels.h"

namespace ember::model {
namespace {

// One token: y = Σ_i a[i] · down row i over the neurons with a non-zero activation. Threads
// split the output columns in whole blocks, so every element sums its neurons in ascending
// order whatever the thread count.
void transposed_down(const tensor::WeightView& down_t, const float* a, float* y, tensor::ThreadPool& pool,
                     std::vector<int32_t>& ids) {
    const int64_t n_ff = down_t.n_rows, n_embd = down_t.n_cols, block = tensor::block_size(down_t.type);
    std::fill(y, y + n_embd, 0.0f);
    const int64_t cols_per_task = (n_embd / block + pool.size() - 1) / pool.size() * block;
    ids.clear();
    for (int64_t i = 0; i < n_ff; ++i)
        if (a[i] != 0.0f) ids.push_back(int32_t(i));
    pool.run((n_embd + cols_per_task - 1) / cols_per_task, [&](int64_t task, int) {
        const int64_t col0 = task * cols_per_task;
        accumulate_rows(down_t, ids, a, col0, std::min(cols_per_task, n_embd - col0), y + col0);
    });
}

// The same for several tokens, eight at a time: a neuron's row is read once for all
// of them, and each output element still sums its token's neurons in ascending order from zero.
// `grouped` ([m][n_ff] floats) takes each group's activations side by side per neuron.
void transposed_down_tokens(const tensor::WeightView& down_t, const float* act, int32_t m, float* y, float* grouped,
                            tensor::ThreadPool& pool, std::vector<int32_t>& ids) {
    constexpr int64_t kColsPerTask = 256;  // whole blocks; a slice of every row stays in cache
    const int64_t n_ff = down_t.n_rows, n_embd = down_t.n_cols;
    std::fill(y, y + size_t(m) * n_embd, 0.0f);
    for (int32_t t0 = 0; t0 < m; t0 += kTokensAtOnce) {
        const int g = int(std::min(kTokensAtOnce, m - t0));
        float* c = grouped + size_t(t0) * size_t(n_ff);
        ids.clear();
        for (int64_t i = 0; i < n_ff; ++i) {
            bool any = false;
            for (int t = 0; t < g; ++t) {
                const float a = act[size_t(t0 + t) * size_t(n_ff) + size_t(i)];
                c[size_t(i) * size_t(g) + size_t(t)] = a;
                any = any || a != 0.0f;
            }
            if (any) ids.push_back(int32_t(i));
        }
        pool.run((n_embd + kColsPerTask - 1) / kColsPerTask, [&](int64_t task, int) {
            const int64_t col0 = task * kColsPerTask;
            float* out[kTokensAtOnce];
            for (int t = 0; t < g; ++t) out[t] = y + size_t(t0 + t) * size_t(n_embd) + size_t(col0);
            accumulate_rows_tokens(down_t, ids, c, g, col0, std::min(kColsPerTask, n_embd - col0), out);
        });
    }
}

// One token: the gate's rows, then up's rows for the neurons whose gate is above 0.
int64_t gate_first(const ExpertWeights& w, const float* x, tensor::ThreadPool& pool, ExpertBuffers& b) {
    const int64_t n_ff = w.gate.n_rows, n_embd = w.gate.n_cols;
    tensor::matmul(pool, w.gate, x, 1, b.g, b.prepared);
    b.active.clear();
    for (int64_t i = 0; i < n_ff; ++i)
        if (b.g[i] > 0.0f) b.active.push_back(int32_t(i));
    std::fill(b.act, b.act + n_ff, 0.0f);
    b.prepared.prepare(w.up.type, x, 1, n_embd);
    const int64_t n_active = int64_t(b.active.size());
    constexpr int64_t kPerTask = 64;
    pool.run((n_active + kPerTask - 1) / kPerTask, [&](int64_t task, int) {
        const int64_t begin = task * kPerTask, n = std::min(kPerTask, n_active - begin);
        dot_rows(w.up, std::span<const int32_t>(b.active).subspan(size_t(begin), size_t(n)), b.prepared.row(0), b.up + begin);
        for (int64_t j = begin; j < begin + n; ++j) b.act[b.active[size_t(j)]] = b.g[b.active[size_t(j)]] * b.up[j];
    });
    return n_active;
}

}  // namespace

void read_expert_hparams(const gguf::File& file, const std::string& arch, HParams& hp) {
    const std::string p = arch + ".";
    hp.n_expert = int32_t(optional_uint(file, p + "expert_count", 0));
    hp.n_expert_used = int32_t(optional_uint(file, p + "expert_used_count", 0));
    if (hp.n_expert == 0 || hp.n_expert_used == 0 || hp.n_expert_used > hp.n_expert)
        fail(file.path() + ": " + p + "expert_count (" + std::to_string(hp.n_expert) + ") and " + p +
             "expert_used_count (" + std::to_string(hp.n_expert_used) +
             ") must be 1 or more, the used ones no more than the experts");
    hp.n_ff = int32_t(optional_uint(file, p + "expert_feed_forward_length", uint32_t(hp.n_ff)));
    if (hp.n_ff == 0) fail(file.path() + ": " + p + "expert_feed_forward_length must be 1 or more");
}

MoeLayer bind_moe_layer(TensorBinder& bind, const gguf::File& file, const std::string& prefix, const HParams& hp,
                        uint64_t* expert_bytes) {
    using Rows = TensorBinder::ExpertRows;
    const int64_t n_embd = hp.n_embd, n_ff = hp.n_ff, n_expert = hp.n_expert;
    MoeLayer L;
    L.router = bind.matrix(prefix + "ffn_gate_inp.weight", n_embd, n_expert);
    MoeFfnWeights& e = L.experts;
    e.gate = bind.experts(prefix + "ffn_gate_exps.weight", n_embd, n_ff, n_expert);
    e.up = bind.experts(prefix + "ffn_up_exps.weight", n_embd, n_ff, n_expert,
                        hp.ffn_gate == FfnGate::ReluPar ? Rows::Dots : Rows::Products);
    const std::string down = prefix + "ffn_down_exps.weight";
    const gguf::TensorInfo* t = file.find_tensor(down);
    e.down_transposed = t && n_ff != n_embd && t->ne.size() == 3 && t->ne[0] == n_embd;
    e.down = e.down_transposed ? bind.experts(down, n_embd, n_ff, n_expert, Rows::Stored)
                               : bind.experts(down, n_ff, n_embd, n_expert);
    *expert_bytes += matrix_bytes(e.gate) + matrix_bytes(e.up) + matrix_bytes(e.down);
    return L;
}

std::vector<std::vector<tensor::WeightView>> expert_matrices(const MoeFfnWeights& w, const HParams& hp) {
    std::vector<std::vector<tensor::WeightView>> out;
    if (w.down_transposed) return out;
    for (int64_t e = 0; e < hp.n_expert; ++e)
        out.push_back({w.gate.rows(e * hp.n_ff, hp.n_ff), w.up.rows(e * hp.n_ff, hp.n_ff), w.down.rows(e * hp.n_embd, hp.n_embd)});
    return out;
}

ExpertWork run_expert(const ExpertWeights& w, FfnGate gate, const float* x, int32_t m, float* y, tensor::ThreadPool& pool,
                      ExpertBuffers b) {
    const int64_t n_ff = w.gate.n_rows;
    ExpertWork work;
    if (m == 1 && gate == FfnGate::ReluPar) {
        work.neurons = gate_first(w, x, pool, b);
    } else {
        tensor::matmul(pool, w.gate, x, m, b.g, b.prepared);
        tensor::matmul(pool, w.up, x, m, b.up, b.prepared);
        ffn_activation(gate, b.g, b.up, b.act, m * n_ff);
        work.neurons = m * n_ff;
    }
    if (w.down_transposed && m > 1)
        transposed_down_tokens(w.down, b.act, m, y, b.g, pool, b.active);  // the gate products are spent
    else if (w.down_transposed)
        transposed_down(w.down, b.act, y, pool, b.active);
    else
        tensor::matmul(pool, w.down, b.act, m, y, b.prepared);
    // Rows of up (and of a transposed down) are read for computed neurons only; a batch reads
    // each row once for all its tokens.
    const int64_t rows = m == 1 ? work.neurons : n_ff;
    work.bytes = uint64_t(w.gate.row_bytes) * uint64_t(n_ff) + uint64_t(w.up.row_bytes) * uint64_t(rows) +
                 uint64_t(w.down.row_bytes) * uint64_t(w.down_transposed ? rows : w.down.n_rows);
    return work;
}

}  // namespace ember::model

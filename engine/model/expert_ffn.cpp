#include "model/expert_ffn.h"

#include <algorithm>
#include <span>

#include "common/error.h"
#include "model/architecture.h"
#include "model/blocks.h"
#include "model/scattered_rows.h"
#include "tensor/kernels.h"

namespace ember::model {
namespace {

// One token: y = Σ a[i] · down row i over the neurons ids (ascending). Threads split the output
// columns in whole blocks, so every element sums its neurons in ascending order whatever the
// thread count.
void transposed_down(const tensor::WeightView& down_t, std::span<const int32_t> ids, const float* a, float* y,
                     tensor::ThreadPool& pool) {
    const int64_t n_embd = down_t.n_cols, block = tensor::block_size(down_t.type);
    std::fill(y, y + n_embd, 0.0f);
    const int64_t cols_per_task = (n_embd / block + pool.size() - 1) / pool.size() * block;
    pool.run((n_embd + cols_per_task - 1) / cols_per_task, [&](int64_t task, int) {
        const int64_t col0 = task * cols_per_task;
        accumulate_rows(down_t, ids, a, col0, std::min(cols_per_task, n_embd - col0), y + col0);
    });
}

// Moves the neurons whose activation is not exactly 0 (the up product can be) to the front of
// ids, in order, and returns how many there are.
size_t keep_nonzero(std::span<int32_t> ids, const float* a) {
    return size_t(std::remove_if(ids.begin(), ids.end(), [&](int32_t i) { return a[i] == 0.0f; }) - ids.begin());
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

// act[i] = g[i] · (up row i · x) for the neurons ids, x prepared for up's rows; `up` takes the
// products, one per id.
void up_rows(const ExpertWeights& w, std::span<const int32_t> ids, tensor::ThreadPool& pool, const float* g, float* up,
             float* act, const uint8_t* x) {
    const int64_t n = int64_t(ids.size());
    constexpr int64_t kPerTask = 64;
    pool.run((n + kPerTask - 1) / kPerTask, [&](int64_t task, int) {
        const int64_t begin = task * kPerTask, count = std::min(kPerTask, n - begin);
        dot_rows(w.up, ids.subspan(size_t(begin), size_t(count)), x, up + begin);
        for (int64_t j = begin; j < begin + count; ++j) act[ids[size_t(j)]] = g[ids[size_t(j)]] * up[j];
    });
}

// One token: the gate's rows, then up's rows for the neurons whose gate is above 0, which are
// left in b.active.
int64_t gate_first(const ExpertWeights& w, const float* x, tensor::ThreadPool& pool, ExpertBuffers& b) {
    const int64_t n_ff = w.gate.n_rows, n_embd = w.gate.n_cols;
    tensor::matmul(pool, w.gate, x, 1, b.g, b.prepared);
    b.active.clear();
    for (int64_t i = 0; i < n_ff; ++i)
        if (b.g[i] > 0.0f) b.active.push_back(int32_t(i));
    std::fill(b.act, b.act + n_ff, 0.0f);
    b.prepared.prepare(w.up.type, x, 1, n_embd);
    up_rows(w, b.active, pool, b.g, b.up, b.act, b.prepared.row(0));
    return int64_t(b.active.size());
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

bool down_stored_transposed(const gguf::TensorInfo& t, int64_t n_embd, int64_t n_ff) {
    return n_ff != n_embd && t.ne.size() == 3 && t.ne[0] == n_embd;
}

MoeLayer bind_moe_layer(TensorBinder& bind, const gguf::File& file, const std::string& prefix, const HParams& hp,
                        bool by_neuron, uint64_t* expert_bytes) {
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
    const bool stored_transposed = t && down_stored_transposed(*t, n_embd, n_ff);
    e.down_transposed = stored_transposed || (by_neuron && hp.ffn_gate == FfnGate::ReluPar);
    e.down = stored_transposed   ? bind.experts(down, n_embd, n_ff, n_expert, Rows::Stored)
             : e.down_transposed ? bind.transposed_experts(down, n_ff, n_embd, n_expert)
                                 : bind.experts(down, n_ff, n_embd, n_expert);
    *expert_bytes += matrix_bytes(e.gate) + matrix_bytes(e.up) + matrix_bytes(e.down);
    return L;
}

backend::FfnRows expert_neuron_rows(const MoeFfnWeights& w, const HParams& hp) {
    if (!w.down_transposed || hp.ffn_gate != FfnGate::ReluPar) return {};
    return {{}, w.up, w.down, int64_t(hp.n_expert_used) * hp.n_ff};
}

std::vector<std::vector<tensor::WeightView>> expert_matrices(const MoeFfnWeights& w, const HParams& hp) {
    std::vector<std::vector<tensor::WeightView>> out;
    if (w.down_transposed) return out;
    for (int32_t e = 0; e < hp.n_expert; ++e) {
        const ExpertWeights x = expert_weights(w, hp, e);
        out.push_back({x.gate, x.up, x.down});
    }
    return out;
}

ExpertWeights expert_weights(const MoeFfnWeights& w, const HParams& hp, int32_t e) {
    const int64_t n_ff = hp.n_ff, n_embd = hp.n_embd;
    return {w.gate.rows(e * n_ff, n_ff), w.up.rows(e * n_ff, n_ff),
            w.down_transposed ? w.down.rows(e * n_ff, n_ff) : w.down.rows(e * n_embd, n_embd), w.down_transposed};
}

uint64_t expert_bytes(const ExpertWeights& w) { return matrix_bytes(w.gate) + matrix_bytes(w.up) + matrix_bytes(w.down); }

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
    if (w.down_transposed && m > 1) {
        transposed_down_tokens(w.down, b.act, m, y, b.g, pool, b.active);  // the gate products are spent
    } else if (w.down_transposed) {
        if (gate != FfnGate::ReluPar) {
            b.active.clear();
            for (int64_t i = 0; i < n_ff; ++i) b.active.push_back(int32_t(i));
        }
        b.active.resize(keep_nonzero(b.active, b.act));
        transposed_down(w.down, b.active, b.act, y, pool);
    } else {
        tensor::matmul(pool, w.down, b.act, m, y, b.prepared);
    }
    // Rows of up (and of a transposed down) are read for computed neurons only; a batch reads
    // each row once for all its tokens.
    const int64_t rows = m == 1 ? work.neurons : n_ff;
    work.bytes = uint64_t(w.gate.row_bytes) * uint64_t(n_ff) + uint64_t(w.up.row_bytes) * uint64_t(rows) +
                 uint64_t(w.down.row_bytes) * uint64_t(w.down_transposed ? rows : w.down.n_rows);
    return work;
}

ExpertWork split_experts(std::span<const RoutedExpert> experts, const uint8_t* resident, int32_t il, const float* x,
                         float* out, backend::DeviceStream& device, tensor::ThreadPool& pool, ExpertSplitBuffers s) {
    const int64_t n_ff = experts.front().w.gate.n_rows, n_embd = experts.front().w.gate.n_cols;
    s.cold.clear();
    s.cold_end.clear();
    s.hot.clear();
    s.ids.clear();
    for (size_t j = 0; j < experts.size(); ++j) {
        const RoutedExpert& r = experts[j];
        float* g = s.g + j * size_t(n_ff);
        tensor::matmul(pool, r.w.gate, x, 1, g, s.prepared);
        for (int64_t i = 0; i < n_ff; ++i) {
            if (g[i] <= 0.0f) continue;
            if (!resident[r.first_row + i]) {
                s.cold.push_back(int32_t(i));
                continue;
            }
            s.hot.push_back(int32_t(j * size_t(n_ff) + size_t(i)));
            s.ids.push_back(r.first_row + int32_t(i));
        }
        s.cold_end.push_back(int64_t(s.cold.size()));
    }
    std::fill(s.act, s.act + experts.size() * size_t(n_ff), 0.0f);
    s.prepared.prepare(experts.front().w.up.type, x, 1, n_embd);  // every expert's up rows have one type
    backend::DeviceJoin join(&device);
    join.device->begin_dots(il, s.prepared.row(0), s.ids, nullptr, s.v);  // the device holds no gate rows
    // Expert j's cold neurons are cold[cold_end[j - 1], cold_end[j]).
    const auto cold = [&](size_t j) {
        const int64_t begin = j == 0 ? 0 : s.cold_end[j - 1];
        return std::span<int32_t>(s.cold).subspan(size_t(begin), size_t(s.cold_end[j] - begin));
    };
    for (size_t j = 0; j < experts.size(); ++j)
        up_rows(experts[j].w, cold(j), pool, s.g + j * size_t(n_ff), s.up, s.act + j * size_t(n_ff), s.prepared.row(0));
    join.wait();
    for (size_t h = 0; h < s.hot.size(); ++h) {
        const size_t j = size_t(s.hot[h]) / size_t(n_ff);
        s.act[s.hot[h]] = s.g[s.hot[h]] * s.v[h];
        s.coef[h] = experts[j].weight * s.act[s.hot[h]];
    }
    join.device->begin_down(il, s.ids, s.coef, s.y_device);
    std::fill(out, out + n_embd, 0.0f);
    const uint64_t neuron_bytes = uint64_t(experts.front().w.up.row_bytes + experts.front().w.down.row_bytes);
    ExpertWork work;
    for (size_t j = 0; j < experts.size(); ++j) {
        const RoutedExpert& r = experts[j];
        const std::span<int32_t> ids = cold(j);
        const float* act = s.act + j * size_t(n_ff);
        work.neurons += int64_t(ids.size());
        work.bytes += uint64_t(r.w.gate.row_bytes) * uint64_t(n_ff) + neuron_bytes * uint64_t(ids.size());
        transposed_down(r.w.down, ids.first(keep_nonzero(ids, act)), act, s.y, pool);
        for (int64_t o = 0; o < n_embd; ++o) out[o] += r.weight * s.y[o];
    }
    join.wait();
    for (int64_t o = 0; o < n_embd; ++o) out[o] += s.y_device[o];
    const int64_t hot = int64_t(s.hot.size());
    work.neurons += hot;
    work.bytes += neuron_bytes * uint64_t(hot);
    work.neurons_on_device = hot;
    work.bytes_on_device = neuron_bytes * uint64_t(hot);
    return work;
}

}  // namespace ember::model

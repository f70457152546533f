#include "model/sparse_ffn.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <span>

#include "model/scattered_rows.h"
#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/quant_blocks.h"

namespace ember::model {
namespace {

constexpr int64_t kNeuronsPerTask = 64;
// The CPU-only FFN sums its output chunk by chunk: fixed chunks, so the order of the sum does not
// depend on the thread count. A multiple of the Q8_0 block (32 neurons).
constexpr int64_t kNeuronsPerChunk = 512;
// A prompt's down rows are read once for kTokensAtOnce tokens; its threads split the output into
// slices of whole blocks, small enough that a chunk's part of the rows stays in cache.
constexpr int64_t kOutputsPerSlice = 256;

// Activations are quantized in whole Q8_0 blocks; ss.a is zero past n_ff up to this length.
int64_t whole_blocks(int64_t n) { return (n + tensor::kQK - 1) / tensor::kQK * tensor::kQK; }

// The value neuron i's down row is scaled by, rounded the way PowerInfer rounds it for the
// row's type: F16 rows meet an F16 activation, Q4_0 rows a Q8_0-quantized one (its block
// already in ss.a_q8).
float coefficient(tensor::DType down_type, const SparseScratch& ss, int32_t i) {
    if (down_type == tensor::DType::Q4_0) {
        const tensor::BlockQ8_0& b = reinterpret_cast<const tensor::BlockQ8_0*>(ss.a_q8.data())[i / tensor::kQK];
        return float(b.qs[i % tensor::kQK]) * tensor::fp16_to_f32(b.d);
    }
    if (down_type == tensor::DType::F16) return tensor::fp16_to_f32(tensor::f32_to_fp16(ss.a[size_t(i)]));
    return ss.a[size_t(i)];
}

// The coefficients of every active neuron, the CPU's and the device's.
void down_coefficients(const tensor::WeightView& down_t, SparseScratch& ss, int32_t n_ff) {
    if (down_t.type == tensor::DType::Q4_0)
        tensor::kernels().prepare_q8_activation(ss.a.data(), ss.a_q8.data(), whole_blocks(n_ff));
    for (const auto* list : {&ss.active, &ss.hot_active})
        for (int32_t i : *list) ss.coef[size_t(i)] = coefficient(down_t.type, ss, i);
}

// The coefficients of the active neurons ss.active[begin, end), which lie in the neurons
// [n0, n0 + n) (n0 a multiple of 32): rounding is per 32-neuron block, so a chunk of whole
// blocks rounds them as the whole vector would. Their Q8_0 blocks go to their place in ss.a_q8,
// which chunks share without overlapping.
void chunk_coefficients(const tensor::WeightView& down_t, SparseScratch& ss, int64_t n0, int64_t n, int64_t begin,
                        int64_t end) {
    if (down_t.type == tensor::DType::Q4_0) {
        auto* blocks = reinterpret_cast<tensor::BlockQ8_0*>(ss.a_q8.data());
        // The reference table's preparation is the Q8_0 blocks alone, which every table's starts with.
        tensor::reference_kernels().prepare_q8_activation(ss.a.data() + n0, blocks + n0 / tensor::kQK, whole_blocks(n));
    }
    for (int64_t j = begin; j < end; ++j) {
        const int32_t i = ss.active[size_t(j)];
        ss.coef[size_t(i)] = coefficient(down_t.type, ss, i);
    }
}

// a[i] for the active neurons ss.active[begin, end): their gate and up rows against the
// prepared FFN input. Q4_0 rows go four at a time (two gated neurons or four ungated ones),
// bit-identical to one at a time, with the next group's rows prefetched.
void gate_up_rows(const SparseFfnWeights& w, FfnGate gate, SparseScratch& ss, int64_t begin, int64_t end) {
    const int64_t n_embd = w.up.n_cols;
    const uint8_t* x = ss.prepared_x.row(0);
    // A gate-first FFN has every gate product already: only its up rows are read here.
    const float* known = w.gate_first() ? ss.gate.data() : nullptr;
    const bool gated = gate != FfnGate::Relu && !known;
    const auto value = [&](int32_t i, float g, float v) { return ffn_activation_value(gate, known ? known[i] : g, v); };
    const auto prefetch_neuron = [&](int32_t i) {
        prefetch_bytes(w.up.row(i), w.up.row_bytes);
        if (gated) prefetch_bytes(w.gate.row(i), w.gate.row_bytes);
    };
    int64_t j = begin;
    const bool x16 = w.up.type == tensor::DType::Q4_0_X16;
    if ((w.up.type == tensor::DType::Q4_0 || x16) && (!gated || w.gate.type == w.up.type)) {
        const tensor::KernelTable& k = tensor::kernels();
        // The next rows are prefetched here, so the kernel does not run past a row's end.
        const auto dot4 = [&](const void* const* rows, float* out) {
            if (x16)
                k.dot4_q4_0x16_q8_0(n_embd, rows, x, out, 0);
            else
                k.dot4_q4_0_q8_0(n_embd, rows, x, out);
        };
        const int64_t per_call = gated ? 2 : 4;
        for (; j + per_call <= end; j += per_call) {
            for (int64_t p = j + per_call; p < std::min(end, j + 2 * per_call); ++p) prefetch_neuron(ss.active[size_t(p)]);
            const int32_t* ids = ss.active.data() + j;
            const void* rows[4];
            float out[4];
            if (gated) {
                rows[0] = w.gate.row(ids[0]), rows[1] = w.up.row(ids[0]);
                rows[2] = w.gate.row(ids[1]), rows[3] = w.up.row(ids[1]);
                dot4(rows, out);
                ss.a[size_t(ids[0])] = ffn_activation_value(gate, out[0], out[1]);
                ss.a[size_t(ids[1])] = ffn_activation_value(gate, out[2], out[3]);
            } else {
                for (int r = 0; r < 4; ++r) rows[r] = w.up.row(ids[r]);
                dot4(rows, out);
                for (int r = 0; r < 4; ++r) ss.a[size_t(ids[r])] = value(ids[r], 0.0f, out[r]);
            }
        }
    }
    for (; j < end; ++j) {
        const int32_t i = ss.active[size_t(j)];
        if (j + 1 < end) prefetch_neuron(ss.active[size_t(j + 1)]);
        const float v = tensor::dot_row(w.up.type, n_embd, w.up.row(i), x);
        const float g = gated ? tensor::dot_row(w.gate.type, n_embd, w.gate.row(i), x) : 0.0f;
        ss.a[size_t(i)] = value(i, g, v);
    }
}

// The token's FFN input in the gate/up rows' dot type, and no activation yet.
void prepare_token(const SparseFfnWeights& w, const float* x, SparseScratch& ss) {
    std::fill(ss.a.begin(), ss.a.end(), 0.0f);
    ss.prepared_x.prepare(w.up.type, x, 1, w.up.n_cols);
}

// Where each fixed chunk of neurons starts in `ids` (ascending): chunk c's neurons are
// ids[begin[c], begin[c + 1]). Returns the number of chunks.
int64_t chunk_bounds(const std::vector<int32_t>& ids, int64_t n_ff, std::vector<int64_t>& begin) {
    const int64_t n_chunks = (n_ff + kNeuronsPerChunk - 1) / kNeuronsPerChunk;
    begin.assign(size_t(n_chunks) + 1, int64_t(ids.size()));
    for (int64_t c = 0, j = 0; c < n_chunks; ++c) {
        begin[size_t(c)] = j;
        while (j < int64_t(ids.size()) && ids[size_t(j)] < (c + 1) * kNeuronsPerChunk) ++j;
    }
    return n_chunks;
}

// y ([n_out]) = the partial sums ([n_chunks][n_out]) of the chunks that `used` (chunk → bool)
// marks, added in chunk order from zero: the order that keeps a sum independent of the threads.
template <class Used>
void add_chunk_sums(const float* partials, int64_t n_chunks, int64_t n_out, Used used, float* y) {
    std::fill(y, y + n_out, 0.0f);
    for (int64_t c = 0; c < n_chunks; ++c) {
        if (!used(c)) continue;
        const float* part = partials + size_t(c) * size_t(n_out);
        for (int64_t j = 0; j < n_out; ++j) y[j] += part[j];
    }
}

// Everything on the CPU: each fixed chunk of neurons computes its active neurons' gate and up
// rows with `gate`, their coefficients and its share of
// the output from whole down rows; the shares are summed chunk by chunk. A chunk's rows are read
// back to back, by one thread, with no wait between the halves of the FFN.
void sum_chunks(const SparseFfnWeights& w, FfnGate gate, float* y, tensor::ThreadPool& pool,
                SparseScratch& ss) {
    const int64_t n_embd = w.up.n_cols, n_ff = w.up.n_rows;
    const int64_t n_chunks = chunk_bounds(ss.active, n_ff, ss.chunk_begin);
    ss.down_rows.resize(ss.active.size());
    pool.run(n_chunks, [&](int64_t c, int) {
        const int64_t begin = ss.chunk_begin[size_t(c)], end = ss.chunk_begin[size_t(c) + 1];
        int64_t& rows = ss.chunk_rows[size_t(c)];
        rows = 0;
        if (begin == end) return;
        gate_up_rows(w, gate, ss, begin, end);
        const int64_t n0 = c * kNeuronsPerChunk;
        chunk_coefficients(w.down_t, ss, n0, std::min(kNeuronsPerChunk, n_ff - n0), begin, end);
        for (int64_t j = begin; j < end; ++j) {
            const int32_t i = ss.active[size_t(j)];
            if (ss.coef[size_t(i)] != 0.0f) ss.down_rows[size_t(begin + rows++)] = i;
        }
        float* part = ss.partial.data() + size_t(c) * size_t(n_embd);
        std::fill(part, part + n_embd, 0.0f);
        accumulate_rows(w.down_t, std::span<const int32_t>(ss.down_rows).subspan(size_t(begin), size_t(rows)),
                        ss.coef.data(), 0, n_embd, part);
    });
    add_chunk_sums(ss.partial.data(), n_chunks, n_embd, [&](int64_t c) { return ss.chunk_rows[size_t(c)] > 0; }, y);
}

// Up to eight tokens' inputs (rows of a, t.n_rows apart) as their coefficients, rounded as
// coefficient() rounds them, into `grouped` ([n_in][m]: input i's m coefficients side by side),
// and the inputs with any non-zero coefficient into ss.down_rows, ascending.
void group_coefficients(const tensor::WeightView& t, const float* a, int m, float* grouped, SparseScratch& ss) {
    const int64_t n_in = t.n_rows;
    for (int k = 0; k < m; ++k) {
        std::copy_n(a + size_t(k) * size_t(n_in), n_in, ss.a.begin());
        std::fill(ss.a.begin() + n_in, ss.a.begin() + whole_blocks(n_in), 0.0f);
        tensor::reference_kernels().prepare_q8_activation(ss.a.data(), ss.a_q8.data(), whole_blocks(n_in));
        for (int64_t i = 0; i < n_in; ++i) ss.token_coef[size_t(k) * size_t(n_in) + size_t(i)] = coefficient(t.type, ss, int32_t(i));
    }
    ss.down_rows.clear();
    for (int64_t i = 0; i < n_in; ++i) {
        bool any = false;
        for (int k = 0; k < m; ++k) {
            const float c = ss.token_coef[size_t(k) * size_t(n_in) + size_t(i)];
            grouped[size_t(i) * size_t(m) + size_t(k)] = c;
            any = any || c != 0.0f;
        }
        if (any) ss.down_rows.push_back(int32_t(i));
    }
}

// x's entries with |x| above the threshold into out, the others 0; returns how many were kept.
int64_t keep_large_inputs(const float* x, int64_t n, float threshold, float* out) {
    int64_t kept = 0;
    for (int64_t j = 0; j < n; ++j) {
        const bool keep = std::fabs(x[j]) > threshold;
        out[j] = keep ? x[j] : 0.0f;
        kept += keep;
    }
    return kept;
}

// One token: each fixed chunk of inputs sums all of its kept rows, from zero, on one thread (not
// the threads splitting the outputs, which read every row in pieces on both); the chunks' sums
// are then added in order, as product_by_inputs_batch adds them.
void product_of_kept_inputs(const tensor::WeightView& t, float* kept, float* y, tensor::ThreadPool& pool,
                            SparseScratch& ss) {
    const int64_t n_in = t.n_rows, n_out = t.n_cols;
    group_coefficients(t, kept, 1, ss.coef.data(), ss);
    const int64_t n_chunks = chunk_bounds(ss.down_rows, n_in, ss.chunk_begin);
    const std::span<const int32_t> rows(ss.down_rows);
    pool.run(n_chunks, [&](int64_t c, int) {
        const int64_t begin = ss.chunk_begin[size_t(c)], end = ss.chunk_begin[size_t(c) + 1];
        if (begin == end) return;
        float* sum = ss.chunk_sum.data() + size_t(c) * size_t(n_out);
        std::fill(sum, sum + n_out, 0.0f);
        accumulate_rows(t, rows.subspan(size_t(begin), size_t(end - begin)), ss.coef.data(), 0, n_out, sum);
    });
    add_chunk_sums(ss.chunk_sum.data(), n_chunks, n_out,
                   [&](int64_t c) { return ss.chunk_begin[size_t(c)] < ss.chunk_begin[size_t(c) + 1]; }, y);
}

}  // namespace

void product_by_inputs_batch(const tensor::WeightView& t, float* a, int32_t n_tokens, float* y,
                             tensor::ThreadPool& pool, SparseScratch& ss) {
    const int64_t n_out = t.n_cols, n_in = t.n_rows;
    const int64_t n_slices = (n_out + kOutputsPerSlice - 1) / kOutputsPerSlice;
    for (int32_t t0 = 0; t0 < n_tokens; t0 += kTokensAtOnce) {
        const int m = int(std::min<int32_t>(kTokensAtOnce, n_tokens - t0));
        // The group's inputs are read before its coefficients take their place.
        float* grouped = a + size_t(t0) * size_t(n_in);
        group_coefficients(t, grouped, m, grouped, ss);
        const int64_t n_chunks = chunk_bounds(ss.down_rows, n_in, ss.chunk_begin);
        float* out = y + size_t(t0) * size_t(n_out);
        std::fill(out, out + size_t(m) * size_t(n_out), 0.0f);
        // Threads split the outputs; each output sums chunk after chunk, as one token's does.
        pool.run(n_slices, [&](int64_t slice, int) {
            const int64_t col0 = slice * kOutputsPerSlice, n = std::min(kOutputsPerSlice, n_out - col0);
            float* rows_out[kTokensAtOnce];
            for (int k = 0; k < m; ++k) rows_out[k] = out + size_t(k) * size_t(n_out) + size_t(col0);
            const std::span<const int32_t> rows(ss.down_rows);
            for (int64_t c = 0; c < n_chunks; ++c) {
                const int64_t begin = ss.chunk_begin[size_t(c)], end = ss.chunk_begin[size_t(c) + 1];
                accumulate_rows_tokens(t, rows.subspan(size_t(begin), size_t(end - begin)), grouped, m, col0, n,
                                       rows_out);
            }
        });
    }
}

void cpu_sparse_ffn(const SparseFfnWeights& w, FfnGate gate, const float* x, float* y, tensor::ThreadPool& pool,
                    SparseScratch& ss) {
    prepare_token(w, x, ss);
    sum_chunks(w, gate, y, pool, ss);
}

// Some active neurons are resident on the device: it computes their gate/up rows while the CPU
// computes the rest; then both sum their down rows and the device's share is added. Two phases,
// since a Q4_0 row's coefficient is rounded with its 32-neuron block, whose neurons may lie on
// either side.
void split_sparse_ffn(int32_t il, const SparseFfnWeights& w, FfnGate gate, const float* x, float* y,
                      backend::DeviceStream& device, tensor::ThreadPool& pool, SparseScratch& ss) {
    const int64_t n_embd = w.up.n_cols, n_ff = w.up.n_rows;
    prepare_token(w, x, ss);
    backend::DeviceJoin join(&device);
    join.device->begin_dots(il, ss.prepared_x.row(0), ss.hot_active, ss.g.data(), ss.v.data());
    const int64_t n_active = int64_t(ss.active.size());
    pool.run((n_active + kNeuronsPerTask - 1) / kNeuronsPerTask, [&](int64_t task, int) {
        const int64_t begin = task * kNeuronsPerTask;
        gate_up_rows(w, gate, ss, begin, std::min(n_active, begin + kNeuronsPerTask));
    });
    join.wait();
    // A gate-first FFN chose its neurons by the CPU's gate products, and keeps them.
    for (size_t j = 0; j < ss.hot_active.size(); ++j) {
        const int32_t i = ss.hot_active[j];
        ss.a[size_t(i)] = ffn_activation_value(gate, w.gate_first() ? ss.gate[size_t(i)] : ss.g[j], ss.v[j]);
    }

    // Threads split the output elements, each summing every cold active neuron in ascending
    // order, so the result is the same for any thread count.
    down_coefficients(w.down_t, ss, int32_t(n_ff));
    for (size_t j = 0; j < ss.hot_active.size(); ++j) ss.hot_coef[j] = ss.coef[size_t(ss.hot_active[j])];
    join.device->begin_down(il, ss.hot_active, ss.hot_coef.data(), ss.y_device.data());
    std::fill(y, y + n_embd, 0.0f);
    ss.down_rows.clear();
    for (int32_t i : ss.active)
        if (ss.coef[size_t(i)] != 0.0f) ss.down_rows.push_back(i);
    // One slice of the outputs per thread, so that each thread reads its part of a row and no
    // more. Slices hold whole blocks of the row's type.
    const int64_t block = std::max<int64_t>(tensor::kQK, tensor::block_size(w.down_t.type));
    const int64_t blocks = (n_embd + block - 1) / block;
    const int64_t cols_per_task = (blocks + pool.size() - 1) / pool.size() * block;
    pool.run((n_embd + cols_per_task - 1) / cols_per_task, [&](int64_t task, int) {
        const int64_t col0 = task * cols_per_task;
        accumulate_rows(w.down_t, ss.down_rows, ss.coef.data(), col0, std::min(cols_per_task, n_embd - col0), y + col0);
    });
    join.wait();
    for (int64_t j = 0; j < n_embd; ++j) y[j] += ss.y_device[size_t(j)];
}

// The buffers a product by inputs shares with the down projection hold the larger of the widest
// product by input and the down's n_ff.
SparseScratch::SparseScratch(int32_t n_ff, int32_t max_rank, int32_t n_embd, int32_t n_layer, int32_t width)
    : h(size_t(max_rank)), score(size_t(n_ff)), gate(size_t(n_ff)), a(size_t(whole_blocks(std::max(n_ff, width)))),
      coef(a.size()), a_q8(tensor::kernels().q8_activation_bytes(int64_t(a.size()))), stats(size_t(n_layer)),
      g(size_t(n_ff)), v(size_t(n_ff)), hot_coef(size_t(n_ff)), y_device(size_t(n_embd)),
      chunk_begin(size_t((std::max(n_ff, width) + kNeuronsPerChunk - 1) / kNeuronsPerChunk) + 1),
      chunk_rows(chunk_begin.size() - 1), partial(chunk_rows.size() * size_t(n_embd)),
      token_coef(size_t(kTokensAtOnce) * a.size()), x_kept(size_t(width)),
      chunk_sum(size_t((width + kNeuronsPerChunk - 1) / kNeuronsPerChunk) * size_t(std::max(n_ff, width))),
      score_order(size_t(n_ff)) {
    active.reserve(size_t(n_ff));
    down_rows.reserve(a.size());
    hot_active.reserve(size_t(n_ff));
    prepared_x.reserve(1, std::max(n_embd, n_ff));
}

bool is_powerinfer_layout(const gguf::File& file) {
    return file.magic() == "PWRI" || file.find_tensor("blk.0.ffn_down_t.weight") != nullptr;
}

void product_of_large_inputs(const tensor::WeightView& t, const float* x, int32_t n_tokens, float threshold,
                             float* kept, float* y, tensor::ThreadPool& pool, SparseScratch& ss) {
    const int64_t n_in = t.n_rows;
    ss.inputs_kept.resize(size_t(n_tokens));
    for (int32_t k = 0; k < n_tokens; ++k)
        ss.inputs_kept[size_t(k)] =
            keep_large_inputs(x + size_t(k) * size_t(n_in), n_in, threshold, kept + size_t(k) * size_t(n_in));
    if (n_tokens == 1)
        product_of_kept_inputs(t, kept, y, pool, ss);
    else
        product_by_inputs_batch(t, kept, n_tokens, y, pool, ss);
}

void gate_scores(const SparseFfnWeights& w, FfnGate gate, const float* x, tensor::ThreadPool& pool,
                 tensor::PreparedActivations& prepared, SparseScratch& ss) {
    tensor::matmul(pool, w.gate, x, 1, ss.gate.data(), prepared);
    score_gate_products(gate, ss.gate.data(), w.gate.n_rows, ss);
}

void score_gate_products(FfnGate gate, const float* g, int64_t n_ff, SparseScratch& ss) {
    for (int64_t i = 0; i < n_ff; ++i) ss.score[size_t(i)] = std::fabs(ffn_activation_value(gate, g[i], 1.0f));
}

float score_of_kept(SparseScratch& ss, int64_t n_ff, int64_t keep) {
    // A neuron whose activation is exactly 0 adds nothing: never kept, so a ReLU model with more
    // zeros than the share skips them all.
    const float above_zero = std::nextafter(0.0f, 1.0f);
    if (keep <= 0) return INFINITY;
    if (keep >= n_ff) return above_zero;
    std::copy_n(ss.score.begin(), n_ff, ss.score_order.begin());
    const auto kth = ss.score_order.begin() + (keep - 1);
    std::nth_element(ss.score_order.begin(), kth, ss.score_order.begin() + n_ff, std::greater<float>());
    return std::max(*kth, above_zero);
}

void select_active(int32_t il, const SparseFfnWeights& w, FfnGate gate, float threshold, const uint8_t* hot,
                   SparseScratch& ss, int64_t inputs_kept) {
    const int64_t n_ff = w.up.n_rows;
    ss.active.clear();
    ss.hot_active.clear();
    for (int64_t i = 0; i < n_ff; ++i) {
        if (ss.score[size_t(i)] < threshold) continue;
        (hot && hot[i] ? ss.hot_active : ss.active).push_back(int32_t(i));
    }
    // What chose the neurons: the predictor, or every gate row, or the kept inputs' gate rows.
    const uint64_t predictor_bytes = w.gate_t.n_rows ? uint64_t(w.gate_t.row_bytes) * uint64_t(inputs_kept)
                                     : w.gate_first() ? uint64_t(w.gate.row_bytes) * uint64_t(n_ff)
                                                      : uint64_t(w.fc1.row_bytes) * uint64_t(w.fc1.n_rows) +
                                                            uint64_t(w.fc2.row_bytes) * uint64_t(w.fc2.n_rows);
    const uint64_t neuron_bytes = uint64_t(w.up.row_bytes + w.down_t.row_bytes) +
                                  (gate == FfnGate::Relu || w.gate_first() ? 0 : uint64_t(w.gate.row_bytes));
    SparseLayerStats& stats = ss.stats[size_t(il)];
    stats.tokens += 1;
    stats.active += int64_t(ss.active.size() + ss.hot_active.size());
    stats.active_on_device += int64_t(ss.hot_active.size());
    stats.bytes_read += predictor_bytes + neuron_bytes * uint64_t(ss.active.size() + ss.hot_active.size());
    stats.bytes_read_on_device += neuron_bytes * uint64_t(ss.hot_active.size());
}

}  // namespace ember::model

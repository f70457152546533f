// A GPU behind the device seam: the hot rows of each layer, the dense matrices, the KV cache and
// the scratch placed there in one arena of exactly the footprint, the gathered gate/up dot
// products, the ordered down-projection sum and the dense products as kernels on one stream, and
// the join as one small copy back per call.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/attention_kernels.h"
#include "backend/cuda/attention_math.h"
#include "backend/cuda/ffn_kernels.h"
#include "backend/cuda/gpu_arena.h"
#include "backend/cuda/gpu_buffer.h"
#include "backend/cuda/gpu_runtime.h"
#include "backend/cuda/layer_kernels.h"
#include "backend/gpu.h"
#include "common/error.h"

namespace ember::backend {
namespace {

using gpu::Arena;
using gpu::check;
using gpu::DeviceBuffer;
using gpu::PinnedBuffer;
using tensor::DType;

using Block = Arena::Block;

// A matrix's rows in the arena: row r at the block's start + r * row_bytes.
struct RowsInArena {
    Block block{};
    DType type{};
    size_t row_bytes = 0;
    int64_t n_cols = 0;
};

// One layer's resident rows, a block each for gate, up and down_t with one slot per neuron:
// slot s of every block holds neuron ids[s]. Slots need not be in neuron order, so a re-plan
// moves only the rows that change side.
struct LayerRows {
    std::optional<RowsInArena> gate;
    RowsInArena up, down;
    std::vector<int32_t> ids;
    std::vector<int32_t> local_of;  // neuron -> slot, -1 when not resident
    uint64_t per_neuron = 0;
};

// A dense matrix placed on the device.
struct DenseMatrix {
    RowsInArena rows;
    int32_t n_rows = 0;
};

// Device scratch in the arena and its pinned host twin, grown (never shrunk) to the largest
// size asked for; grown only with nothing queued.
struct Staging {
    std::optional<Block> dev;
    uint64_t bytes = 0;
    PinnedBuffer host;
};

// A half-layer's results, copied from pinned staging into the caller's arrays at wait().
struct PendingCopy {
    float* dst;
    const float* src;
    size_t n;
};

class GpuDevice final : public Device {
public:
    GpuDevice(const GpuInfo& info, uint64_t budget) : Device(budget), index_(info.index), name_(info.name) {
        check(gpuSetDevice(index_), "selecting the GPU");
        check(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking), "creating a stream");
        arena_.emplace(name_, stream_);
    }
    ~GpuDevice() override {
        (void)gpuStreamSynchronize(stream_);
        arena_.reset();
        (void)gpuStreamDestroy(stream_);
    }

    std::string name() const override { return name_; }
    // Q4_0_X16 rows go up as stored Q4_0 (rows_as_stored).
    bool supports(DType t) const override {
        t = tensor::stored_type(t);
        return t == DType::F16 || t == DType::Q4_0 || t == DType::Q8_0;
    }
    int32_t max_head_dim() const override { return gpu::kMaxHeadDim; }

    void begin_dots(int32_t il, const uint8_t* x, std::span<const int32_t> ids, float* g, float* v) override {
        if (!pending_.empty()) wait();  // the staging buffers are reused: one half-layer at a time
        select();
        ffn_scratch();
        const LayerRows& l = layer(il);
        const int32_t n = int32_t(ids.size());
        const size_t x_bytes = gpu::activation_bytes(l.up.type, l.up.n_cols);
        std::memcpy(ffn_x_.host.data(), x, x_bytes);
        translate(l, ids);
        async_upload(dev(ffn_x_), ffn_x_.host.data(), x_bytes);
        async_upload(dev(ffn_local_), ffn_local_.host.data(), sizeof(int32_t) * size_t(n));
        const int32_t* local = reinterpret_cast<const int32_t*>(dev(ffn_local_));
        gpu::launch_dots(view(l.up), dev(ffn_x_), local, n, reinterpret_cast<float*>(dev(ffn_v_)), stream_);
        async_download(ffn_v_.host.data(), dev(ffn_v_), sizeof(float) * size_t(n));
        pending_.push_back({v, ffn_v_.host.as<float>(), size_t(n)});
        if (l.gate) {
            gpu::launch_dots(view(*l.gate), dev(ffn_x_), local, n, reinterpret_cast<float*>(dev(ffn_g_)), stream_);
            async_download(ffn_g_.host.data(), dev(ffn_g_), sizeof(float) * size_t(n));
            pending_.push_back({g, ffn_g_.host.as<float>(), size_t(n)});
        }
        traffic_.rows_computed += uint64_t(n) * (l.gate ? 2 : 1);
    }

    void begin_down(int32_t il, std::span<const int32_t> ids, const float* coef, float* y) override {
        if (!pending_.empty()) wait();
        select();
        ffn_scratch();
        const LayerRows& l = layer(il);
        const int32_t n = int32_t(ids.size());
        translate(l, ids);
        std::memcpy(ffn_coef_.host.data(), coef, sizeof(float) * size_t(n));
        async_upload(dev(ffn_local_), ffn_local_.host.data(), sizeof(int32_t) * size_t(n));
        async_upload(dev(ffn_coef_), ffn_coef_.host.data(), sizeof(float) * size_t(n));
        gpu::launch_down(view(l.down), reinterpret_cast<const int32_t*>(dev(ffn_local_)),
                         reinterpret_cast<const float*>(dev(ffn_coef_)), n, reinterpret_cast<float*>(dev(ffn_partial_)),
                         reinterpret_cast<float*>(dev(ffn_y_)), stream_);
        async_download(ffn_y_.host.data(), dev(ffn_y_), sizeof(float) * size_t(l.down.n_cols));
        pending_.push_back({y, ffn_y_.host.as<float>(), size_t(l.down.n_cols)});
        for (int32_t j = 0; j < n; ++j) traffic_.rows_computed += coef[j] != 0.0f;
    }

    // Products queue back to back, each with its own share of the staging, so products that
    // share an input (a layer's Q, K and V) cost one round trip; the staging grows, to what
    // the queue wanted, only with nothing queued.
    void begin_matmul(const tensor::WeightView& w, const uint8_t* x, size_t x_stride, int32_t n_tokens,
                      float* y) override {
        select();
        if (!matrices_.count(w.data)) fail(name_ + ": a matrix of " + std::to_string(w.n_rows) + " rows is not resident");
        const size_t x_bytes = gpu::activation_bytes(tensor::stored_type(w.type), w.n_cols);
        const size_t y_count = size_t(n_tokens) * size_t(w.n_rows);
        const uint64_t in_bytes = x_bytes * size_t(n_tokens), out_bytes = y_count * sizeof(float);
        if (!matmul_in_.dev || !matmul_out_.dev || matmul_in_used_ + in_bytes > matmul_in_.bytes ||
            matmul_out_used_ + out_bytes > matmul_out_.bytes) {
            const uint64_t want_in = matmul_in_used_ + in_bytes, want_out = matmul_out_used_ + out_bytes;
            if (!pending_.empty()) wait();
            reserve(matmul_in_, std::max(matmul_in_.bytes, want_in), "a dense product's input");
            reserve(matmul_out_, std::max(matmul_out_.bytes, want_out), "a dense product's output");
        }
        const DenseMatrix& m = matrices_.at(w.data);  // looked up after reserve(), which may compact
        uint8_t* host_in = matmul_in_.host.data() + matmul_in_used_;
        float* host_out = reinterpret_cast<float*>(matmul_out_.host.data() + matmul_out_used_);
        uint8_t* dev_in = dev(matmul_in_) + matmul_in_used_;
        float* dev_out = reinterpret_cast<float*>(dev(matmul_out_) + matmul_out_used_);
        for (int32_t t = 0; t < n_tokens; ++t)
            std::memcpy(host_in + size_t(t) * x_bytes, x + size_t(t) * x_stride, x_bytes);
        async_upload(dev_in, host_in, in_bytes);
        gpu::launch_matmul(view(m.rows), m.n_rows, dev_in, n_tokens, dev_out, stream_);
        async_download(host_out, dev_out, out_bytes);
        pending_.push_back({y, host_out, y_count});
        // Each share starts on the arena's alignment, as the kernels' loads expect.
        matmul_in_used_ += ArenaLayout::aligned(in_bytes);
        matmul_out_used_ += ArenaLayout::aligned(out_bytes);
        ++traffic_.matmuls;
    }

    void begin_attention(int32_t il, int32_t pos0, int32_t n_tokens, const float* q, const float* k, const float* v,
                         float* out) override {
        const KvShape& kv = kv_shape();
        check_attention(il, pos0, n_tokens);
        if (!pending_.empty()) wait();
        select();
        const size_t n_gqa = size_t(kv.n_embd_gqa()), n_embd = size_t(kv.n_head) * size_t(kv.head_dim);
        const size_t q_count = size_t(n_tokens) * n_embd, kv_count = size_t(n_tokens) * n_gqa;
        reserve(attention_in_, (q_count + 2 * kv_count) * sizeof(float), "attention's input");
        reserve(attention_out_, q_count * sizeof(float), "attention's output");
        reserve(scores_, size_t(kv.n_head) * size_t(kv.n_ctx) * sizeof(float), "attention's scores", false);
        float* host_in = attention_in_.host.as<float>();
        std::memcpy(host_in, q, q_count * sizeof(float));
        std::memcpy(host_in + q_count, k, kv_count * sizeof(float));
        std::memcpy(host_in + q_count + kv_count, v, kv_count * sizeof(float));
        async_upload(dev(attention_in_), host_in, (q_count + 2 * kv_count) * sizeof(float));
        const float* dev_q = reinterpret_cast<const float*>(dev(attention_in_));
        queue_attention(il, pos0, n_tokens, dev_q, dev_q + q_count, dev_q + q_count + kv_count,
                        reinterpret_cast<float*>(dev(attention_out_)));
        async_download(attention_out_.host.data(), dev(attention_out_), q_count * sizeof(float));
        pending_.push_back({out, attention_out_.host.as<float>(), q_count});
        ++traffic_.attentions;
    }

    // The whole sub-layer on the stream: x and the angles go up, the result comes back, and
    // every intermediate stays in the arena.
    void begin_attention_layer(int32_t il, const AttentionLayer& layer, int32_t pos0, int32_t n_tokens,
                               const float* angles, const float* x, float* out) override {
        const KvShape& kv = kv_shape();
        check_attention(il, pos0, n_tokens);
        const size_t n = size_t(n_tokens), n_embd = size_t(kv.n_head) * size_t(kv.head_dim);
        const size_t n_gqa = size_t(kv.n_embd_gqa()), hd = size_t(kv.head_dim);
        if (layer.qkv.size() != 1 && layer.qkv.size() != 3)
            fail(name_ + ": attention takes Q, K and V as 1 or 3 matrices, not " + std::to_string(layer.qkv.size()));
        for (const tensor::WeightView& w : layer.qkv)
            if (!matrices_.count(w.data)) fail(name_ + ": a Q/K/V matrix of " + std::to_string(w.n_rows) + " rows is not resident");
        if (!matrices_.count(layer.wo.data)) fail(name_ + ": the attention output matrix is not resident");
        if (layer.qkv.size() == 1 && size_t(layer.qkv[0].n_rows) != n_embd + 2 * n_gqa)
            fail(name_ + ": a fused Q/K/V matrix of " + std::to_string(layer.qkv[0].n_rows) + " rows does not match the KV cache's heads");
        if (!pending_.empty()) wait();
        select();
        // Work: the normalized input (later attention's output), Q (later Wo's output), K, V, and
        // one prepared activation (F16 is the largest layout).
        const uint64_t rows = ArenaLayout::aligned(n * n_embd * sizeof(float));
        const uint64_t kv_rows = ArenaLayout::aligned(n * n_gqa * sizeof(float));
        const uint64_t act = ArenaLayout::aligned(n * gpu::activation_bytes(DType::F16, int64_t(n_embd)));
        reserve(layer_in_, (n * n_embd + n * hd) * sizeof(float), "the attention sub-layer's input");
        reserve(layer_out_, n * n_embd * sizeof(float), "the attention sub-layer's output");
        reserve(layer_work_, 2 * rows + 2 * kv_rows + act, "the attention sub-layer's intermediates", false);
        reserve(scores_, size_t(kv.n_head) * size_t(kv.n_ctx) * sizeof(float), "attention's scores", false);
        hold_vector(layer.norm.w, n_embd);
        if (layer.norm.b) hold_vector(layer.norm.b, n_embd);
        // Addresses only now: a new block may have compacted the arena.
        float* host_in = layer_in_.host.as<float>();
        std::memcpy(host_in, x, n * n_embd * sizeof(float));
        std::memcpy(host_in + n * n_embd, angles, n * hd * sizeof(float));
        async_upload(dev(layer_in_), host_in, (n * n_embd + n * hd) * sizeof(float));
        const float* d_x = reinterpret_cast<const float*>(dev(layer_in_));
        const float* d_angles = d_x + n * n_embd;
        uint8_t* work = dev(layer_work_);
        float* d_xn = reinterpret_cast<float*>(work);
        float* d_q = reinterpret_cast<float*>(work + rows);
        float* d_k = reinterpret_cast<float*>(work + 2 * rows);
        float* d_v = reinterpret_cast<float*>(work + 2 * rows + kv_rows);
        uint8_t* d_act = work + 2 * rows + 2 * kv_rows;
        float* d_out = reinterpret_cast<float*>(dev(layer_out_));

        gpu::launch_norm(d_x, vector_at(layer.norm.w), layer.norm.b ? vector_at(layer.norm.b) : nullptr, layer.norm.eps,
                         int64_t(n_embd), n_tokens, d_xn, stream_);
        float* const qkv_out[] = {d_q, d_k, d_v};
        const int32_t qkv_rows[] = {int32_t(n_embd), int32_t(n_gqa), int32_t(n_gqa)};
        std::optional<DType> prepared;  // the activation type d_act holds
        for (size_t m = 0; m < 3; ++m) {
            const DenseMatrix& dm = matrices_.at(layer.qkv[layer.qkv.size() == 3 ? m : 0].data);
            if (prepared != tensor::activation_type(dm.rows.type)) {
                gpu::launch_prepare(dm.rows.type, d_xn, int64_t(n_embd), n_tokens, d_act, stream_);
                prepared = tensor::activation_type(dm.rows.type);
            }
            gpu::DeviceRows part = view(dm.rows);
            // A fused matrix: Q's rows, then K's, then V's.
            if (layer.qkv.size() == 1) part.data += size_t(m == 0 ? 0 : m == 1 ? n_embd : n_embd + n_gqa) * part.row_bytes;
            gpu::launch_matmul(part, qkv_rows[m], d_act, n_tokens, qkv_out[m], stream_);
        }
        const bool neox = layer.pairs == tensor::RopePairs::NeoX;
        gpu::launch_rope(d_q, n_embd, kv.n_head, kv.head_dim, n_tokens, d_angles, neox, stream_);
        gpu::launch_rope(d_k, n_gqa, kv.n_head_kv, kv.head_dim, n_tokens, d_angles, neox, stream_);
        queue_attention(il, pos0, n_tokens, d_q, d_k, d_v, d_xn);
        const DenseMatrix& wo = matrices_.at(layer.wo.data);
        gpu::launch_prepare(wo.rows.type, d_xn, int64_t(n_embd), n_tokens, d_act, stream_);
        gpu::launch_matmul(view(wo.rows), wo.n_rows, d_act, n_tokens, layer.residual ? d_q : d_out, stream_);
        if (layer.residual) gpu::launch_add(d_x, d_q, n * n_embd, d_out, stream_);
        async_download(layer_out_.host.data(), d_out, n * n_embd * sizeof(float));
        pending_.push_back({out, layer_out_.host.as<float>(), n * n_embd});
        traffic_.matmuls += layer.qkv.size() + 1;
        ++traffic_.attentions;
        ++traffic_.attention_sublayers;
    }

    // fc1's product, ReLU and fc2's product on the stream: u goes up, the scores come back.
    void begin_predictor(const tensor::WeightView& fc1, const tensor::WeightView& fc2, const float* u, int32_t n_tokens,
                         float* scores) override {
        if (!matrices_.count(fc1.data) || !matrices_.count(fc2.data)) fail(name_ + ": a predictor matrix is not resident");
        if (!pending_.empty()) wait();
        select();
        const size_t n = size_t(n_tokens), n_in = size_t(fc1.n_cols), rank = size_t(fc1.n_rows), n_out = size_t(fc2.n_rows);
        const uint64_t hidden = ArenaLayout::aligned(n * rank * sizeof(float));
        const uint64_t act = ArenaLayout::aligned(n * gpu::activation_bytes(DType::F16, int64_t(std::max(n_in, rank))));
        reserve(predictor_in_, n * n_in * sizeof(float), "the predictor's input");
        reserve(predictor_out_, n * n_out * sizeof(float), "the predictor's scores");
        reserve(predictor_work_, hidden + act, "the predictor's hidden layer", false);
        const DenseMatrix& m1 = matrices_.at(fc1.data);  // looked up after reserve(), which may compact
        const DenseMatrix& m2 = matrices_.at(fc2.data);
        std::memcpy(predictor_in_.host.data(), u, n * n_in * sizeof(float));
        async_upload(dev(predictor_in_), predictor_in_.host.data(), n * n_in * sizeof(float));
        float* d_hidden = reinterpret_cast<float*>(dev(predictor_work_));
        uint8_t* d_act = dev(predictor_work_) + hidden;
        float* d_scores = reinterpret_cast<float*>(dev(predictor_out_));
        gpu::launch_prepare(m1.rows.type, reinterpret_cast<const float*>(dev(predictor_in_)), int64_t(n_in), n_tokens, d_act,
                            stream_);
        gpu::launch_matmul(view(m1.rows), m1.n_rows, d_act, n_tokens, d_hidden, stream_);
        gpu::launch_relu(d_hidden, n * rank, stream_);
        gpu::launch_prepare(m2.rows.type, d_hidden, int64_t(rank), n_tokens, d_act, stream_);
        gpu::launch_matmul(view(m2.rows), m2.n_rows, d_act, n_tokens, d_scores, stream_);
        async_download(predictor_out_.host.data(), d_scores, n * n_out * sizeof(float));
        pending_.push_back({scores, predictor_out_.host.as<float>(), n * n_out});
        traffic_.matmuls += 2;
        ++traffic_.predictors;
    }

    void wait() override {
        if (!pending_.empty()) ++traffic_.joins;
        const gpuError_t e = gpuStreamSynchronize(stream_);
        std::vector<PendingCopy> done = std::exchange(pending_, {});
        matmul_in_used_ = matmul_out_used_ = 0;
        check(e, "running the hot-neuron kernels");
        for (const PendingCopy& c : done) std::memcpy(c.dst, c.src, c.n * sizeof(float));
    }

    DeviceTraffic traffic() const override { return traffic_; }

private:
    // Scratch is dropped first (it is made again on first use) so only what the placement
    // holds moves.
    void resize_memory(uint64_t bytes) override {
        if (!pending_.empty()) wait();
        select();
        drop_scratch();
        arena_->resize_memory(bytes);
    }

    // The device's own scratch (activations, indices, results, partial sums, the attention
    // scores) comes out of the compute-scratch share the session reserves beside the matrices.
    // Matrices leaving are freed before new ones arrive, so memory never holds both sets.
    void store_dense(std::span<const tensor::WeightView> arriving, std::span<const tensor::WeightView> leaving) override {
        if (!pending_.empty()) wait();
        select();
        for (const tensor::WeightView& w : leaving) {
            arena_->release(matrices_.at(w.data).rows.block);
            matrices_.erase(w.data);
        }
        try {
            for (const tensor::WeightView& w : arriving) upload_dense(w);
        } catch (...) {
            for (const tensor::WeightView& w : arriving)
                if (auto it = matrices_.find(w.data); it != matrices_.end()) {
                    arena_->release(it->second.rows.block);
                    matrices_.erase(it);
                }
            throw;
        }
    }

    void upload_dense(const tensor::WeightView& w) {
        const size_t size = w.row_bytes * size_t(w.n_rows);
        DenseMatrix m;
        m.rows = {arena_->take(size, "a dense matrix"), tensor::stored_type(w.type), w.row_bytes, w.n_cols};
        m.n_rows = int32_t(w.n_rows);
        matrices_[w.data] = m;
        // Synchronous from pageable memory: the model's weights are not pinned, and this
        // happens only when the placement changes.
        std::vector<uint8_t> stored;
        const uint8_t* src = w.data;
        if (w.type != tensor::stored_type(w.type)) {
            stored.resize(size);
            for (int64_t r = 0; r < w.n_rows; ++r) tensor::row_as_stored(w, r, stored.data() + size_t(r) * w.row_bytes);
            src = stored.data();
        }
        check(gpuMemcpy(arena_->at(m.rows.block), src, size, gpuMemcpyHostToDevice), "uploading a dense matrix");
        traffic_.dense_bytes_uploaded += size;
    }

    void store_kv_cache(const KvShape& old, const KvShape& shape, uint16_t* host_k, uint16_t* host_v,
                        int32_t n_past) override {
        if (!pending_.empty()) wait();
        select();
        try {
            if (old.n_layer > 0)
                copy_kv(old, n_past, [&](size_t offset, size_t bytes) {
                    check(gpuMemcpy(reinterpret_cast<uint8_t*>(host_k) + offset, arena_->at(*kv_k_) + offset, bytes,
                                    gpuMemcpyDeviceToHost), "copying the KV cache back");
                    check(gpuMemcpy(reinterpret_cast<uint8_t*>(host_v) + offset, arena_->at(*kv_v_) + offset, bytes,
                                    gpuMemcpyDeviceToHost), "copying the KV cache back");
                });
            release_kv();
            if (shape.n_layer == 0) return;
            kv_k_ = arena_->take(shape.bytes() / 2, "the KV cache's keys");
            kv_v_ = arena_->take(shape.bytes() / 2, "the KV cache's values");
            copy_kv(shape, n_past, [&](size_t offset, size_t bytes) {
                check(gpuMemcpy(arena_->at(*kv_k_) + offset, reinterpret_cast<const uint8_t*>(host_k) + offset, bytes,
                                gpuMemcpyHostToDevice), "uploading the KV cache");
                check(gpuMemcpy(arena_->at(*kv_v_) + offset, reinterpret_cast<const uint8_t*>(host_v) + offset, bytes,
                                gpuMemcpyHostToDevice), "uploading the KV cache");
                traffic_.dense_bytes_uploaded += 2 * bytes;
            });
        } catch (...) {
            release_kv();
            throw;
        }
    }
    void release_kv() {
        if (kv_k_) arena_->release(*std::exchange(kv_k_, std::nullopt));
        if (kv_v_) arena_->release(*std::exchange(kv_v_, std::nullopt));
    }

    // Rows staying keep their slots unless they lie past the new size; leaving rows free their
    // slots and arriving rows take free ones, so only arrivals cross the bus.
    void store_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons) override {
        try {
            place_hot_neurons(il, rows, neurons);
        } catch (...) {
            if (auto it = layers_.find(il); it != layers_.end()) {
                release(it->second);
                layers_.erase(it);
            }
            throw;
        }
    }
    void place_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons) {
        const uint64_t per_neuron = neuron_bytes(rows);
        const size_t n = neurons.size();
        if (!pending_.empty()) wait();  // results in flight land before their buffers can change
        select();
        need_ids_ = std::max(need_ids_, rows.most_per_call > 0 ? std::min(n, size_t(rows.most_per_call)) : n);
        need_in_ = std::max(need_in_, rows.up.n_cols);
        need_out_ = std::max(need_out_, rows.down_t.n_cols);

        auto it = layers_.find(il);
        if (it != layers_.end() && !same_rows(it->second, rows)) {
            release(it->second);
            layers_.erase(it);
            it = layers_.end();
        }
        if (n == 0) {
            if (it != layers_.end()) {
                release(it->second);
                layers_.erase(it);
            }
            return;
        }
        ffn_scratch();  // only for a layer that computes on the device: a footprint of 0 holds none
        if (it == layers_.end()) {
            LayerRows fresh = new_layer(rows);
            if (!take_blocks(fresh, n))
                fail(name_ + ": layer " + std::to_string(il) + "'s hot rows do not fit in the " +
                     std::to_string(footprint()) + " bytes of device memory held");
            it = layers_.emplace(il, std::move(fresh)).first;
        }
        LayerRows& l = it->second;
        const size_t old_n = l.ids.size();

        // Which slots keep their neuron, and which neurons arrive.
        std::vector<uint8_t> stays(old_n, 0);
        std::vector<int32_t> arriving;
        for (int32_t id : neurons) {
            const int32_t s = size_t(id) < l.local_of.size() ? l.local_of[size_t(id)] : -1;
            if (s >= 0) stays[size_t(s)] = 1;
            else arriving.push_back(id);
        }
        std::vector<int32_t> free_slots;  // below the new size, the lowest last (taken first)
        for (size_t s = n; s-- > 0;)
            if (s >= old_n || !stays[s]) free_slots.push_back(int32_t(s));
        for (size_t s = 0; s < old_n; ++s)
            if (!stays[s]) l.local_of[size_t(l.ids[s])] = -1;

        // Rows staying past the new size move down into free slots before the blocks shrink.
        std::vector<int32_t> move_to, move_from;
        for (size_t s = n; s < old_n; ++s)
            if (stays[s]) {
                move_to.push_back(free_slots.back());
                move_from.push_back(int32_t(s));
                free_slots.pop_back();
            }
        if (!move_to.empty()) {
            DeviceBuffer maps = upload_indices(move_to, move_from);
            for (const RowsInArena* r : blocks(l)) copy_rows(*r, maps, *r, int32_t(move_to.size()));
            check(gpuStreamSynchronize(stream_), "moving resident rows");
        }
        std::vector<int32_t> next_ids(n, -1);
        for (size_t s = 0; s < std::min(n, old_n); ++s)
            if (stays[s]) next_ids[s] = l.ids[s];
        for (size_t j = 0; j < move_to.size(); ++j) {
            next_ids[size_t(move_to[j])] = l.ids[size_t(move_from[j])];
            l.local_of[size_t(l.ids[size_t(move_from[j])])] = move_to[j];
        }

        bool resized = old_n > 0;  // a new layer's blocks have their size already
        if (resized)
            for (RowsInArena* r : blocks(l)) resized = resized && arena_->resize(r->block, r->row_bytes * n);
        if (old_n > 0 && !resized) {
            // The arena's free space is short of the growth (its scratch outgrew the reserve):
            // the layer starts again in what its old rows free, every row uploaded.
            release(l);
            l = new_layer(rows);
            if (!take_blocks(l, n)) {
                layers_.erase(il);
                fail(name_ + ": layer " + std::to_string(il) + "'s hot rows do not fit in the " +
                     std::to_string(footprint()) + " bytes of device memory held");
            }
            std::fill(next_ids.begin(), next_ids.end(), -1);
            arriving.assign(neurons.begin(), neurons.end());
            free_slots.clear();
            for (size_t s = n; s-- > 0;) free_slots.push_back(int32_t(s));
        }

        std::vector<int32_t> to(arriving.size());
        for (size_t j = 0; j < arriving.size(); ++j) {
            to[j] = free_slots.back();
            free_slots.pop_back();
            next_ids[size_t(to[j])] = arriving[j];
            l.local_of[size_t(arriving[j])] = to[j];
        }
        l.ids = std::move(next_ids);
        if (!arriving.empty()) upload_rows(l, rows, to, arriving);
        traffic_.bytes_uploaded += per_neuron * arriving.size();
    }


    void check_attention(int32_t il, int32_t pos0, int32_t n_tokens) const {
        const KvShape& kv = kv_shape();
        if (kv.n_layer == 0) fail(name_ + ": no KV cache is held");
        if (il < 0 || il >= kv.n_layer || pos0 < 0 || n_tokens < 0 || pos0 + n_tokens > kv.n_ctx)
            fail(name_ + ": attention at layer " + std::to_string(il) + ", positions " + std::to_string(pos0) + ".." +
                 std::to_string(pos0 + n_tokens) + " is outside its KV cache");
    }

    // Queues the K and V rows (device floats, [n_tokens][n_embd_gqa]) into the cache at pos0..
    // and each token's attention of q into out; scores_ must be reserved.
    void queue_attention(int32_t il, int32_t pos0, int32_t n_tokens, const float* q, const float* k, const float* v,
                         float* out) {
        const KvShape& kv = kv_shape();
        const size_t n_gqa = size_t(kv.n_embd_gqa()), n_embd = size_t(kv.n_head) * size_t(kv.head_dim);
        const size_t layer = size_t(il) * size_t(kv.n_ctx) * n_gqa;
        uint16_t* k_layer = reinterpret_cast<uint16_t*>(arena_->at(*kv_k_)) + layer;
        uint16_t* v_layer = reinterpret_cast<uint16_t*>(arena_->at(*kv_v_)) + layer;
        gpu::launch_store_half(k, n_tokens, int32_t(n_gqa), k_layer + size_t(pos0) * n_gqa, n_gqa, stream_);
        gpu::launch_store_half(v, n_tokens, int32_t(n_gqa), v_layer + size_t(pos0) * n_gqa, n_gqa, stream_);
        for (int32_t t = 0; t < n_tokens; ++t) {
            const gpu::AttentionArgs a{q + size_t(t) * n_embd, k_layer, v_layer, n_gqa, pos0 + t + 1,
                                       kv.n_head, kv.n_head / kv.n_head_kv, kv.head_dim,
                                       1.0f / std::sqrt(float(kv.head_dim)), reinterpret_cast<float*>(dev(scores_)),
                                       out + size_t(t) * n_embd};
            gpu::launch_attention(a, stream_);
        }
    }

    // A norm's weights, uploaded on first use and kept with the scratch (the session's reserve
    // covers them).
    void hold_vector(const float* host, size_t n) {
        if (vectors_.count(host)) return;
        check(gpuStreamSynchronize(stream_), "finishing queued work");  // a new block may compact the arena
        const Block b = arena_->take(n * sizeof(float), "a norm's weights");
        vectors_[host] = b;
        check(gpuMemcpy(arena_->at(b), host, n * sizeof(float), gpuMemcpyHostToDevice), "uploading a norm's weights");
    }
    const float* vector_at(const float* host) const { return reinterpret_cast<const float*>(arena_->at(vectors_.at(host))); }

    // The runtime's current device is per host thread, and the session may call from any one.
    void select() const { check(gpuSetDevice(index_), "selecting the GPU"); }

    gpu::DeviceRows view(const RowsInArena& r) const { return {r.type, arena_->at(r.block), r.row_bytes, r.n_cols}; }
    uint8_t* dev(const Staging& s) const { return arena_->at(*s.dev); }

    const LayerRows& layer(int32_t il) const {
        auto it = layers_.find(il);
        if (it == layers_.end()) fail(name_ + ": layer " + std::to_string(il) + " has no resident neurons");
        return it->second;
    }

    static LayerRows new_layer(const FfnRows& rows) {
        LayerRows l;
        auto info = [](const tensor::WeightView& w) {
            return RowsInArena{Block{}, tensor::stored_type(w.type), w.row_bytes, w.n_cols};
        };
        if (rows.gate.n_rows) l.gate = info(rows.gate);
        l.up = info(rows.up);
        l.down = info(rows.down_t);
        l.local_of.assign(size_t(rows.up.n_rows), -1);
        l.per_neuron = neuron_bytes(rows);
        return l;
    }
    // Whether `l` holds rows of the same kinds and sizes as `rows` (always, short of a new model).
    static bool same_rows(const LayerRows& l, const FfnRows& rows) {
        return bool(l.gate) == (rows.gate.n_rows > 0) && l.per_neuron == neuron_bytes(rows) &&
               l.local_of.size() == size_t(rows.up.n_rows) && l.up.type == tensor::stored_type(rows.up.type) &&
               l.down.type == tensor::stored_type(rows.down_t.type);
    }
    static std::vector<RowsInArena*> blocks(LayerRows& l) {
        std::vector<RowsInArena*> b{&l.up, &l.down};
        if (l.gate) b.insert(b.begin(), &*l.gate);
        return b;
    }
    static std::vector<const RowsInArena*> blocks(const LayerRows& l) {
        std::vector<const RowsInArena*> b{&l.up, &l.down};
        if (l.gate) b.insert(b.begin(), &*l.gate);
        return b;
    }
    // A block of n rows for each of a new layer's matrices, or none and false.
    bool take_blocks(LayerRows& l, size_t n) {
        std::vector<Block> taken;
        for (RowsInArena* r : blocks(l)) {
            const std::optional<Block> b = arena_->try_take(r->row_bytes * n);
            if (!b) {
                for (Block t : taken) arena_->release(t);
                return false;
            }
            r->block = *b;
            taken.push_back(*b);
        }
        return true;
    }
    void release(LayerRows& l) {
        for (RowsInArena* r : blocks(l)) arena_->release(r->block);
        l.ids.clear();
    }

    // Local row numbers of `ids` into the pinned index buffer.
    void translate(const LayerRows& l, std::span<const int32_t> ids) {
        if (ids.size() > need_ids_) fail(name_ + ": more neurons asked at once than its FFN buffers hold");
        int32_t* out = ffn_local_.host.as<int32_t>();
        for (size_t j = 0; j < ids.size(); ++j) {
            const int32_t id = ids[j];
            const int32_t r = id >= 0 && size_t(id) < l.local_of.size() ? l.local_of[size_t(id)] : -1;
            if (r < 0) fail(name_ + ": neuron " + std::to_string(id) + " is not resident");
            out[j] = r;
        }
    }

    void async_upload(void* dst, const void* src, size_t bytes) {
        if (bytes) check(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyHostToDevice, stream_), "copying to the GPU");
    }
    void async_download(void* dst, const void* src, size_t bytes) {
        if (bytes) check(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDeviceToHost, stream_), "copying from the GPU");
    }

    // fn(byte offset, bytes) for each layer's first n_past positions of a cache of `shape`
    // (the same offsets in K and V, on the host and on the device).
    template <class Fn>
    static void copy_kv(const KvShape& shape, int32_t n_past, Fn fn) {
        const size_t row = size_t(shape.n_embd_gqa()) * 2;
        for (int32_t il = 0; il < shape.n_layer; ++il)
            if (n_past > 0) fn(size_t(il) * size_t(shape.n_ctx) * row, size_t(n_past) * row);
    }

    // Grows `s` to `bytes` with nothing queued, with a pinned host twin unless the scratch never
    // crosses the bus; a new block may compact the arena.
    void reserve(Staging& s, uint64_t bytes, const char* what, bool pinned = true) {
        if (s.dev && bytes <= s.bytes) return;
        check(gpuStreamSynchronize(stream_), "finishing queued work");
        if (s.dev) arena_->release(*s.dev);
        s.dev.reset();
        s.dev = arena_->take(std::max<uint64_t>(bytes, 1), std::string("the scratch for ") + what);
        s.host = pinned ? PinnedBuffer(bytes) : PinnedBuffer();
        s.bytes = bytes;
    }
    void drop_scratch() {
        for (Staging* s : {&ffn_x_, &ffn_local_, &ffn_g_, &ffn_v_, &ffn_coef_, &ffn_y_, &ffn_partial_, &matmul_in_,
                           &matmul_out_, &attention_in_, &attention_out_, &scores_, &layer_in_, &layer_out_,
                           &layer_work_, &predictor_in_, &predictor_out_, &predictor_work_}) {
            if (s->dev) arena_->release(*s->dev);
            *s = Staging();
        }
        for (const auto& [host, b] : vectors_) arena_->release(b);
        vectors_.clear();
    }

    // The FFN scratch for the largest layer seen (made again after drop_scratch()).
    void ffn_scratch() {
        const size_t ids = std::max<size_t>(need_ids_, 1);
        reserve(ffn_x_, size_t(need_in_) * 2 + size_t(need_in_ / 32) * 34, "the FFN input");  // the larger of F16 and Q8_0
        for (Staging* s : {&ffn_local_, &ffn_g_, &ffn_v_, &ffn_coef_}) reserve(*s, ids * 4, "the FFN's neurons");
        reserve(ffn_partial_, size_t(gpu::down_chunks(int32_t(ids))) * size_t(need_out_) * 4, "the FFN's partial sums");
        reserve(ffn_y_, size_t(need_out_) * 4, "the FFN output");
    }

    DeviceBuffer upload_indices(const std::vector<int32_t>& to, const std::vector<int32_t>& from) {
        const size_t bytes = to.size() * 4;
        PinnedBuffer host(2 * bytes);
        std::memcpy(host.data(), to.data(), bytes);
        std::memcpy(host.data() + bytes, from.data(), bytes);
        DeviceBuffer dev(2 * bytes);
        async_upload(dev.data(), host.data(), 2 * bytes);
        check(gpuStreamSynchronize(stream_), "copying row indices");  // `host` is freed on return
        return dev;
    }

    // maps: n destination rows, then n source rows.
    void copy_rows(const RowsInArena& dst, const DeviceBuffer& maps, const RowsInArena& src, int32_t n) {
        gpu::launch_copy_rows(arena_->at(dst.block), maps.as<int32_t>(), arena_->at(src.block), maps.as<int32_t>() + n, n,
                              dst.row_bytes, stream_);
    }

    // The arriving rows go up through pinned staging straight into their slots, one copy per
    // run of consecutive slots (a new layer's rows are one run), with no device memory besides
    // the arena's.
    void upload_rows(LayerRows& l, const FfnRows& rows, const std::vector<int32_t>& to, const std::vector<int32_t>& ids) {
        const size_t n = ids.size();
        auto one = [&](const RowsInArena& dst, const tensor::WeightView& w) {
            PinnedBuffer host(w.row_bytes * n);
            for (size_t j = 0; j < n; ++j) tensor::row_as_stored(w, ids[j], host.data() + j * w.row_bytes);
            for (size_t j = 0; j < n;) {
                size_t run = 1;
                while (j + run < n && to[j + run] == to[j] + int32_t(run)) ++run;
                async_upload(arena_->at(dst.block) + size_t(to[j]) * w.row_bytes, host.data() + j * w.row_bytes,
                             run * w.row_bytes);
                j += run;
            }
            check(gpuStreamSynchronize(stream_), "uploading hot rows");  // `host` is freed on return
        };
        if (l.gate) one(*l.gate, rows.gate);
        one(l.up, rows.up);
        one(l.down, rows.down_t);
    }

    int index_;
    std::string name_;
    gpuStream_t stream_{};
    std::optional<gpu::Arena> arena_;  // made once the stream exists
    std::map<int32_t, LayerRows> layers_;
    std::map<const uint8_t*, DenseMatrix> matrices_;  // keyed by the host copy's data
    std::optional<Block> kv_k_, kv_v_;
    DeviceTraffic traffic_;
    std::vector<PendingCopy> pending_;
    size_t need_ids_ = 0;  // the FFN scratch's sizes: the most neurons and widest rows of any layer
    int64_t need_in_ = 0, need_out_ = 0;
    Staging ffn_x_, ffn_local_, ffn_g_, ffn_v_, ffn_coef_, ffn_y_, ffn_partial_;
    Staging matmul_in_, matmul_out_, attention_in_, attention_out_, scores_;
    Staging layer_in_, layer_out_, layer_work_;  // the attention sub-layer's
    Staging predictor_in_, predictor_out_, predictor_work_;
    std::map<const float*, Block> vectors_;       // norm weights, keyed by the host copy
    uint64_t matmul_in_used_ = 0, matmul_out_used_ = 0;  // the queued products' shares of the staging
};

}  // namespace

std::unique_ptr<Device> make_gpu_device(int index, uint64_t budget_bytes) {
    const GpuProbe probe = probe_gpus();
    if (probe.gpus.empty()) fail("no GPU: " + probe.reason);
    const auto it = std::find_if(probe.gpus.begin(), probe.gpus.end(), [&](const GpuInfo& g) { return g.index == index; });
    if (it == probe.gpus.end())
        fail("GPU " + std::to_string(index) + " does not exist (" + probe.api + " sees " + std::to_string(probe.gpus.size()) + ")");
    if (!it->unusable.empty()) fail(it->name + " cannot be used: " + it->unusable);
    if (budget_bytes > it->free_bytes)
        fail("a VRAM budget of " + std::to_string(budget_bytes >> 20) + " MiB exceeds the " +
             std::to_string(it->free_bytes >> 20) + " MiB free on " + it->name);
    return std::make_unique<GpuDevice>(*it, budget_bytes);
}

}  // namespace ember::backend

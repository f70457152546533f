#include <algorithm>
#include <cmath>
#include <cstddef>
#include <condition_variable>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/device.h"
#include "tensor/layer_steps.h"
#include "common/error.h"
#include "tensor/attention_head.h"
#include "tensor/kernels.h"
#include "tensor/matmul.h"
#include "tensor/rope.h"
#include "tensor/thread_pool.h"

namespace ember::backend {
namespace {

// One layer's resident rows: local row r holds neuron ids[r] for every matrix.
struct LayerRows {
    std::vector<int32_t> ids;
    std::map<int32_t, int32_t> local;  // neuron id -> local row
    std::vector<uint8_t> gate, up, down_t;
    size_t gate_row = 0, up_row = 0, down_row = 0;
    tensor::DType gate_type{}, up_type{}, down_type{};
    int64_t n_cols = 0, n_out = 0;
};

void append_rows(std::vector<uint8_t>& dst, const tensor::WeightView& w, std::span<const int32_t> ids) {
    for (int32_t id : ids) dst.insert(dst.end(), w.row(id), w.row(id) + w.row_bytes);
}

// The device's queue: one job at a time on its own thread, like a GPU stream.
class Queue {
public:
    Queue() : thread_([this] { run(); }) {}
    ~Queue() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

    void submit(std::function<void()> job) {
        wait();
        {
            std::lock_guard lock(mutex_);
            job_ = std::move(job);
        }
        cv_.notify_all();
    }

    void wait() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return !job_; });
        if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    }

private:
    void run() {
        std::unique_lock lock(mutex_);
        for (;;) {
            cv_.wait(lock, [&] { return stop_ || job_; });
            if (stop_) return;
            lock.unlock();
            std::exception_ptr error;
            try {
                job_();
            } catch (...) {
                error = std::current_exception();
            }
            lock.lock();
            job_ = nullptr;
            error_ = error;
            cv_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    std::function<void()> job_;
    std::exception_ptr error_;
    bool stop_ = false;
    std::thread thread_;  // last: starts after the members it uses exist
};

class SimDevice final : public Device {
public:
    SimDevice(uint64_t budget, tensor::ThreadPool* pool)
        : Device(budget), own_pool_(pool ? nullptr : std::make_unique<tensor::ThreadPool>(1)), pool_(pool ? pool : own_pool_.get()) {}
    ~SimDevice() override = default;

    std::string name() const override { return "sim"; }
    bool supports(tensor::DType) const override { return true; }
    int32_t max_head_dim() const override { return std::numeric_limits<int32_t>::max(); }

    void begin_dots(int32_t il, const uint8_t* x, std::span<const int32_t> ids, float* g, float* v) override {
        queued_ = true;
        queue_.submit([this, il, x, ids, g, v] {
            const LayerRows& l = layer(il);
            for (size_t j = 0; j < ids.size(); ++j) {
                const size_t r = size_t(local_row(l, ids[j]));
                v[j] = tensor::dot_row(l.up_type, l.n_cols, l.up.data() + r * l.up_row, x);
                if (l.gate_row) g[j] = tensor::dot_row(l.gate_type, l.n_cols, l.gate.data() + r * l.gate_row, x);
            }
            traffic_.rows_computed += ids.size() * (l.gate_row ? 2 : 1);
        });
    }

    void begin_down(int32_t il, std::span<const int32_t> ids, const float* coef, float* y) override {
        queued_ = true;
        queue_.submit([this, il, ids, coef, y] {
            const LayerRows& l = layer(il);
            std::fill(y, y + l.n_out, 0.0f);
            for (size_t j = 0; j < ids.size(); ++j) {
                if (coef[j] == 0.0f) continue;
                const uint8_t* row = l.down_t.data() + size_t(local_row(l, ids[j])) * l.down_row;
                tensor::axpy_row(l.down_type, l.n_out, coef[j], row, y);
                ++traffic_.rows_computed;
            }
        });
    }

    // Runs on the calling thread with the session's threads: the caller waits for a dense
    // product at once anyway, and a second pool or a hand-off to the queue would only compete
    // with it for the same cores.
    void begin_matmul(const tensor::WeightView& w, const uint8_t* x, size_t x_stride, int32_t n_tokens,
                      float* y) override {
        if (!holds(w)) fail("sim: a matrix of " + std::to_string(w.n_rows) + " rows is not resident");
        queue_.wait();
        queued_ = true;
        tensor::matmul_prepared(*pool_, w, x, x_stride, n_tokens, y);
        ++traffic_.matmuls;
    }

    void begin_attention(int32_t il, int32_t pos0, int32_t n_tokens, const float* q, const float* k, const float* v,
                         float* out) override {
        const KvShape& kv = kv_shape();
        if (kv.n_layer == 0) fail("sim: no KV cache is held");
        if (il < 0 || il >= kv.n_layer || pos0 < 0 || n_tokens < 0 || pos0 + n_tokens > kv.n_ctx)
            fail("sim: attention at layer " + std::to_string(il) + ", positions " + std::to_string(pos0) + ".." +
                 std::to_string(pos0 + n_tokens) + " is outside its KV cache");
        queue_.wait();
        queued_ = true;
        const tensor::KernelTable& kern = tensor::kernels();
        const size_t n_gqa = size_t(kv.n_embd_gqa());
        uint16_t* k_layer = kv_k_.data() + size_t(il) * size_t(kv.n_ctx) * n_gqa;
        uint16_t* v_layer = kv_v_.data() + size_t(il) * size_t(kv.n_ctx) * n_gqa;
        for (int32_t t = 0; t < n_tokens; ++t) {
            kern.f32_to_f16(k + size_t(t) * n_gqa, k_layer + size_t(pos0 + t) * n_gqa, int64_t(n_gqa));
            kern.f32_to_f16(v + size_t(t) * n_gqa, v_layer + size_t(pos0 + t) * n_gqa, int64_t(n_gqa));
        }
        const int32_t hd = kv.head_dim, group = kv.n_head / kv.n_head_kv;
        const float scale = 1.0f / std::sqrt(float(hd));
        const size_t per_thread = half_.size() / size_t(pool_->size());
        const size_t n_embd = size_t(kv.n_head) * size_t(hd);
        pool_->run(int64_t(n_tokens) * kv.n_head, [&](int64_t task, int thread) {
            const int32_t t = int32_t(task / kv.n_head), h = int32_t(task % kv.n_head);
            const size_t offset = size_t(h / group) * size_t(hd);
            tensor::attend_head(q + size_t(t) * n_embd + size_t(h) * size_t(hd), k_layer + offset, v_layer + offset, n_gqa,
                                pos0 + t + 1, hd, scale, half_.data() + size_t(thread) * per_thread,
                                scores_.data() + size_t(thread) * per_thread, out + size_t(t) * n_embd + size_t(h) * size_t(hd));
        });
        ++traffic_.attentions;
    }

    // On the calling thread like the products, in the CPU path's steps and order, so its results
    // are the CPU's bit for bit.
    void begin_attention_layer(int32_t il, const AttentionLayer& layer, int32_t pos0, int32_t n_tokens,
                               const float* angles, const float* x, float* out) override {
        const KvShape& kv = kv_shape();
        if (kv.n_layer == 0) fail("sim: no KV cache is held");
        if (layer.qkv.size() != 1 && layer.qkv.size() != 3)
            fail("sim: attention takes Q, K and V as 1 or 3 matrices, not " + std::to_string(layer.qkv.size()));
        for (const tensor::WeightView& w : layer.qkv)
            if (!holds(w)) fail("sim: a Q/K/V matrix of " + std::to_string(w.n_rows) + " rows is not resident");
        if (!holds(layer.wo)) fail("sim: the attention output matrix is not resident");
        queue_.wait();
        const size_t n = size_t(n_tokens), n_embd = size_t(layer.wo.n_rows), n_gqa = size_t(kv.n_embd_gqa());
        const int32_t hd = kv.head_dim;
        layer_xn_.resize(n * n_embd);
        layer_q_.resize(n * n_embd);
        layer_k_.resize(n * n_gqa);
        layer_v_.resize(n * n_gqa);
        tensor::normalize(layer.norm, x, layer_xn_.data(), int64_t(n_embd), n_tokens);
        if (layer.qkv.size() == 3) {
            float* dst[] = {layer_q_.data(), layer_k_.data(), layer_v_.data()};
            for (size_t m = 0; m < 3; ++m) tensor::matmul(*pool_, layer.qkv[m], layer_xn_.data(), n_tokens, dst[m], prepared_);
        } else {
            layer_fused_.resize(n * (n_embd + 2 * n_gqa));
            tensor::matmul(*pool_, layer.qkv[0], layer_xn_.data(), n_tokens, layer_fused_.data(), prepared_);
            tensor::split_qkv(layer_fused_.data(), n_tokens, n_embd, n_gqa, layer_q_.data(), layer_k_.data(), layer_v_.data());
        }
        for (size_t t = 0; t < n; ++t) {
            tensor::rope_rotate(layer_q_.data() + t * n_embd, kv.n_head, hd, angles + t * size_t(hd), layer.pairs);
            tensor::rope_rotate(layer_k_.data() + t * n_gqa, kv.n_head_kv, hd, angles + t * size_t(hd), layer.pairs);
        }
        // Attention's result replaces the normalized input, no longer needed.
        begin_attention(il, pos0, n_tokens, layer_q_.data(), layer_k_.data(), layer_v_.data(), layer_xn_.data());
        tensor::matmul(*pool_, layer.wo, layer_xn_.data(), n_tokens, layer_q_.data(), prepared_);
        for (size_t i = 0; i < n * n_embd; ++i) out[i] = layer.residual ? x[i] + layer_q_[i] : layer_q_[i];
        traffic_.matmuls += layer.qkv.size() + 1;
        ++traffic_.attention_sublayers;
    }

    void begin_predictor(const tensor::WeightView& fc1, const tensor::WeightView& fc2, const float* u, int32_t n_tokens,
                         float* scores) override {
        if (!holds(fc1) || !holds(fc2)) fail("sim: a predictor matrix is not resident");
        queue_.wait();
        queued_ = true;
        layer_q_.resize(size_t(n_tokens) * size_t(fc1.n_rows));
        tensor::matmul(*pool_, fc1, u, n_tokens, layer_q_.data(), prepared_);
        for (float& h : layer_q_) h = h > 0.0f ? h : 0.0f;
        tensor::matmul(*pool_, fc2, layer_q_.data(), n_tokens, scores, prepared_);
        traffic_.matmuls += 2;
        ++traffic_.predictors;
    }

    void wait() override {
        queue_.wait();
        if (std::exchange(queued_, false)) ++traffic_.joins;
    }

    DeviceTraffic traffic() const override { return traffic_; }

private:
    // Host memory: nothing to allocate.
    void resize_memory(uint64_t) override {}

    // Dense matrices are read in place; the ones arriving count as uploaded.
    void store_dense(std::span<const tensor::WeightView> arriving, std::span<const tensor::WeightView>) override {
        queue_.wait();  // no product in flight reads the set being replaced
        for (const tensor::WeightView& w : arriving) traffic_.dense_bytes_uploaded += uint64_t(w.row_bytes) * uint64_t(w.n_rows);
    }

    void store_kv_cache(const KvShape& old, const KvShape& shape, uint16_t* host_k, uint16_t* host_v, int32_t n_past) override {
        queue_.wait();
        if (old.n_layer > 0) copy_kv(old, kv_k_.data(), kv_v_.data(), host_k, host_v, n_past);
        const size_t elems = size_t(shape.bytes() / 4);
        kv_k_.assign(elems, 0);
        kv_v_.assign(elems, 0);
        if (shape.n_layer > 0) {
            copy_kv(shape, host_k, host_v, kv_k_.data(), kv_v_.data(), n_past);
            traffic_.dense_bytes_uploaded += 2 * uint64_t(shape.n_layer) * uint64_t(n_past) * uint64_t(shape.n_embd_gqa()) * 2;
            const size_t per_thread = size_t(std::max(shape.head_dim, shape.n_ctx));
            half_.assign(per_thread * size_t(pool_->size()), 0);
            scores_.assign(per_thread * size_t(pool_->size()), 0.0f);
        }
    }

    void store_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons) override {
        queue_.wait();  // no job in flight reads the rows being replaced
        const uint64_t per_neuron = neuron_bytes(rows);
        const LayerRows& old = layers_[il];
        LayerRows next;
        next.ids.assign(neurons.begin(), neurons.end());
        next.gate_row = rows.gate.n_rows ? rows.gate.row_bytes : 0;
        next.up_row = rows.up.row_bytes;
        next.down_row = rows.down_t.row_bytes;
        next.gate_type = rows.gate.type;
        next.up_type = rows.up.type;
        next.down_type = rows.down_t.type;
        next.n_cols = rows.up.n_cols;
        next.n_out = rows.down_t.n_cols;
        // Rows already resident are kept (a real device moves them in its own memory); only
        // the others cross the bus.
        for (size_t r = 0; r < next.ids.size(); ++r) {
            const int32_t id = next.ids[r];
            next.local[id] = int32_t(r);
            const std::span<const int32_t> one(&next.ids[r], 1);
            if (auto it = old.local.find(id); it != old.local.end()) {
                const size_t o = size_t(it->second);
                if (next.gate_row)
                    next.gate.insert(next.gate.end(), old.gate.begin() + std::ptrdiff_t(o * next.gate_row),
                                     old.gate.begin() + std::ptrdiff_t((o + 1) * next.gate_row));
                next.up.insert(next.up.end(), old.up.begin() + std::ptrdiff_t(o * next.up_row), old.up.begin() + std::ptrdiff_t((o + 1) * next.up_row));
                next.down_t.insert(next.down_t.end(), old.down_t.begin() + std::ptrdiff_t(o * next.down_row),
                                   old.down_t.begin() + std::ptrdiff_t((o + 1) * next.down_row));
            } else {
                if (next.gate_row) append_rows(next.gate, rows.gate, one);
                append_rows(next.up, rows.up, one);
                append_rows(next.down_t, rows.down_t, one);
                traffic_.bytes_uploaded += per_neuron;
            }
        }
        layers_[il] = std::move(next);
    }

    // The first n_past positions of every layer, from one cache of `shape` to another.
    static void copy_kv(const KvShape& shape, const uint16_t* k_from, const uint16_t* v_from, uint16_t* k_to,
                        uint16_t* v_to, int32_t n_past) {
        const size_t layer = size_t(shape.n_ctx) * size_t(shape.n_embd_gqa());
        const size_t used = size_t(n_past) * size_t(shape.n_embd_gqa());
        for (int32_t il = 0; il < shape.n_layer; ++il) {
            std::copy_n(k_from + size_t(il) * layer, used, k_to + size_t(il) * layer);
            std::copy_n(v_from + size_t(il) * layer, used, v_to + size_t(il) * layer);
        }
    }

    const LayerRows& layer(int32_t il) const {
        auto it = layers_.find(il);
        if (it == layers_.end()) fail("sim: layer " + std::to_string(il) + " has no resident neurons");
        return it->second;
    }
    static int32_t local_row(const LayerRows& l, int32_t id) {
        auto it = l.local.find(id);
        if (it == l.local.end()) fail("sim: neuron " + std::to_string(id) + " is not resident");
        return it->second;
    }

    std::map<int32_t, LayerRows> layers_;
    std::vector<uint16_t> kv_k_, kv_v_;
    std::vector<uint16_t> half_;   // attention scratch, per pool thread
    std::vector<float> scores_;
    std::vector<float> layer_xn_, layer_q_, layer_k_, layer_v_, layer_fused_;  // attention sub-layer scratch
    tensor::PreparedActivations prepared_;
    bool queued_ = false;          // work was queued since the last wait()
    DeviceTraffic traffic_;       // written by queued jobs; read after wait()
    std::unique_ptr<tensor::ThreadPool> own_pool_;  // when not given the session's
    tensor::ThreadPool* pool_;                      // dense products, on the calling thread
    Queue queue_;                 // last: its thread stops before the rows and pool it uses go away
};

}  // namespace

std::unique_ptr<Device> make_sim_device(uint64_t budget_bytes, tensor::ThreadPool* pool) {
    return std::make_unique<SimDevice>(budget_bytes, pool);
}

}  // namespace ember::backend

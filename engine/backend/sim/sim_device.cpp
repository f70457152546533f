#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/device.h"
#include "common/error.h"
#include "tensor/matmul.h"
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
    uint64_t bytes() const { return gate.size() + up.size() + down_t.size(); }
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
        : budget_(budget), own_pool_(pool ? nullptr : std::make_unique<tensor::ThreadPool>(1)), pool_(pool ? pool : own_pool_.get()) {}
    ~SimDevice() override = default;

    std::string name() const override { return "sim"; }
    uint64_t budget_bytes() const override { return budget_; }
    uint64_t used_bytes() const override { return dense_bytes() + ffn_bytes(); }
    bool supports(tensor::DType) const override { return true; }
    void set_budget_bytes(uint64_t bytes) override {
        if (used_bytes() > bytes)
            fail("sim device: a budget of " + std::to_string(bytes) + " bytes is below the " +
                 std::to_string(used_bytes()) + " bytes in use");
        budget_ = bytes;
    }

    void set_dense(std::span<const tensor::WeightView> matrices, uint64_t other_bytes) override {
        uint64_t bytes = other_bytes;
        for (const tensor::WeightView& w : matrices) bytes += matrix_bytes(w);
        if (ffn_bytes() + bytes > budget_)
            fail("sim device: " + std::to_string(bytes) + " bytes of dense parts exceed the budget of " +
                 std::to_string(budget_) + " bytes (" + std::to_string(ffn_bytes()) + " in use)");
        queue_.wait();  // no product in flight reads the set being replaced
        std::map<const uint8_t*, tensor::WeightView> next;
        for (const tensor::WeightView& w : matrices) {
            if (!matrices_.count(w.data)) traffic_.dense_bytes_uploaded += matrix_bytes(w);
            next[w.data] = w;
        }
        matrices_ = std::move(next);
        dense_other_ = other_bytes;
    }

    bool holds(const tensor::WeightView& w) const override { return matrices_.count(w.data) > 0; }

    void set_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons) override {
        const size_t per_neuron = (rows.gate.n_rows ? rows.gate.row_bytes : 0) + rows.up.row_bytes + rows.down_t.row_bytes;
        const uint64_t before = layers_.count(il) ? layers_[il].bytes() : 0;
        const uint64_t after = uint64_t(per_neuron) * neurons.size();
        if (used_bytes() - before + after > budget_)
            fail("sim device: layer " + std::to_string(il) + "'s " + std::to_string(neurons.size()) +
                 " hot neurons need " + std::to_string(after) + " bytes, over the budget of " + std::to_string(budget_));
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
                    next.gate.insert(next.gate.end(), old.gate.begin() + long(o * next.gate_row),
                                     old.gate.begin() + long((o + 1) * next.gate_row));
                next.up.insert(next.up.end(), old.up.begin() + long(o * next.up_row), old.up.begin() + long((o + 1) * next.up_row));
                next.down_t.insert(next.down_t.end(), old.down_t.begin() + long(o * next.down_row),
                                   old.down_t.begin() + long((o + 1) * next.down_row));
            } else {
                if (next.gate_row) append_rows(next.gate, rows.gate, one);
                append_rows(next.up, rows.up, one);
                append_rows(next.down_t, rows.down_t, one);
                traffic_.bytes_uploaded += per_neuron;
            }
        }
        layers_[il] = std::move(next);
    }

    void begin_dots(int32_t il, const uint8_t* x, std::span<const int32_t> ids, float* g, float* v) override {
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
        if (!holds(w)) fail("sim device: a matrix of " + std::to_string(w.n_rows) + " rows is not resident");
        queue_.wait();
        tensor::matmul_prepared(*pool_, w, x, x_stride, n_tokens, y);
        ++traffic_.matmuls;
    }

    void wait() override { queue_.wait(); }

    DeviceTraffic traffic() const override { return traffic_; }

private:
    static uint64_t matrix_bytes(const tensor::WeightView& w) { return uint64_t(w.row_bytes) * uint64_t(w.n_rows); }
    uint64_t dense_bytes() const {
        uint64_t bytes = dense_other_;
        for (const auto& [data, w] : matrices_) bytes += matrix_bytes(w);
        return bytes;
    }
    uint64_t ffn_bytes() const {
        uint64_t bytes = 0;
        for (const auto& [il, l] : layers_) bytes += l.bytes();
        return bytes;
    }

    const LayerRows& layer(int32_t il) const {
        auto it = layers_.find(il);
        if (it == layers_.end()) fail("sim device: layer " + std::to_string(il) + " has no resident neurons");
        return it->second;
    }
    static int32_t local_row(const LayerRows& l, int32_t id) {
        auto it = l.local.find(id);
        if (it == l.local.end()) fail("sim device: neuron " + std::to_string(id) + " is not resident");
        return it->second;
    }

    uint64_t budget_;
    uint64_t dense_other_ = 0;
    std::map<const uint8_t*, tensor::WeightView> matrices_;  // the host's data, read in place
    std::map<int32_t, LayerRows> layers_;
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

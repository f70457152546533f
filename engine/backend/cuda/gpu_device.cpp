// A GPU behind the device seam: the hot rows of each layer and the dense matrices placed there
// in device memory, the gathered gate/up dot products, the ordered down-projection sum and the
// dense products as kernels on one stream, and the join as one small copy back per call.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/attention_kernels.h"
#include "backend/cuda/attention_math.h"
#include "backend/cuda/ffn_kernels.h"
#include "backend/cuda/gpu_runtime.h"
#include "backend/gpu.h"
#include "common/error.h"

namespace ember::backend {
namespace {

using gpu::check;
using tensor::DType;

// Memory from the runtime, freed with its owner: on the device, or page-locked on the host
// (copies from and to pinned memory run asynchronously on the stream).
enum class Where { Device, Pinned };

template <Where W>
class Buffer {
public:
    Buffer() = default;
    explicit Buffer(size_t bytes) : bytes_(bytes) {
        if (!bytes) return;
        if constexpr (W == Where::Device) check(gpuMalloc(reinterpret_cast<void**>(&data_), bytes), "allocating device memory");
        else check(gpuHostAlloc(reinterpret_cast<void**>(&data_), bytes), "allocating pinned host memory");
    }
    Buffer(Buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
    Buffer& operator=(Buffer&& o) noexcept {
        std::swap(data_, o.data_);
        std::swap(bytes_, o.bytes_);
        return *this;
    }
    ~Buffer() {
        if (!data_) return;
        if constexpr (W == Where::Device) (void)gpuFree(data_);
        else (void)gpuFreeHost(data_);
    }
    uint8_t* data() const { return data_; }
    size_t bytes() const { return bytes_; }
    template <class T>
    T* as() const { return reinterpret_cast<T*>(data_); }

private:
    uint8_t* data_ = nullptr;
    size_t bytes_ = 0;
};
using DeviceBuffer = Buffer<Where::Device>;
using PinnedBuffer = Buffer<Where::Pinned>;

// One layer's resident rows, gate | up | down_t in one allocation: local row r is neuron ids[r].
struct LayerRows {
    DeviceBuffer memory;
    std::vector<int32_t> ids;
    std::vector<int32_t> local_of;  // neuron -> local row, -1 when not resident
    gpu::DeviceRows gate, up, down;
    bool gated = false;

};

// A dense matrix placed on the device.
struct DenseMatrix {
    DeviceBuffer memory;
    gpu::DeviceRows rows;
    int32_t n_rows = 0;
};

// A device buffer and its pinned host twin for one kind of transfer, grown (never shrunk) to
// the largest size asked for; grown only with nothing queued.
struct Staging {
    DeviceBuffer dev;
    PinnedBuffer host;
    void reserve(size_t bytes) {
        if (bytes <= dev.bytes()) return;
        dev = DeviceBuffer(bytes);
        host = PinnedBuffer(bytes);
    }
};

// A half-layer's results, copied from pinned staging into the caller's arrays at wait().
struct PendingCopy {
    float* dst;
    const float* src;
    size_t n;
};

class GpuDevice final : public Device {
public:
    GpuDevice(const GpuInfo& info, uint64_t budget) : index_(info.index), name_(info.name), budget_(budget) {
        check(gpuSetDevice(index_), "selecting the GPU");
        check(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking), "creating a stream");
    }
    ~GpuDevice() override {
        (void)gpuStreamSynchronize(stream_);
        layers_.clear();
        matrices_.clear();
        kv_k_ = DeviceBuffer();
        kv_v_ = DeviceBuffer();
        (void)gpuStreamDestroy(stream_);
    }

    std::string name() const override { return name_; }
    uint64_t budget_bytes() const override { return budget_; }
    DeviceUsage usage() const override { return {dense_bytes(), kv_shape_.bytes(), ffn_bytes()}; }
    // Q4_0_X16 rows go up as stored Q4_0 (rows_as_stored).
    bool supports(DType t) const override {
        t = tensor::stored_type(t);
        return t == DType::F16 || t == DType::Q4_0 || t == DType::Q8_0;
    }

    void set_budget_bytes(uint64_t bytes) override {
        if (used_bytes() > bytes)
            fail(name_ + ": a budget of " + std::to_string(bytes) + " bytes is below the " + std::to_string(used_bytes()) +
                 " bytes in use");
        budget_ = bytes;
    }

    // The device's own scratch (activations, indices, results, partial sums) is part of the
    // compute-scratch share the session reserves in other_bytes.
    void set_dense(std::span<const tensor::WeightView> matrices, uint64_t other_bytes) override {
        uint64_t bytes = other_bytes;
        for (const tensor::WeightView& w : matrices) {
            if (!supports(w.type))
                fail(name_ + ": a dense matrix is " + tensor::dtype_name(w.type) +
                     "; the GPU kernels take F16, Q4_0 and Q8_0");
            bytes += uint64_t(w.row_bytes) * uint64_t(w.n_rows);
        }
        const uint64_t others = ffn_bytes() + kv_shape_.bytes();
        if (others + bytes > budget_)
            fail(name_ + ": " + std::to_string(bytes) + " bytes of dense parts exceed the budget of " +
                 std::to_string(budget_) + " bytes (" + std::to_string(others) + " in use)");
        if (!pending_.empty()) wait();
        select();
        // Matrices leaving are freed before new ones arrive, so memory never holds both sets.
        std::map<const uint8_t*, DenseMatrix> next;
        for (const tensor::WeightView& w : matrices)
            if (auto it = matrices_.find(w.data); it != matrices_.end()) next[w.data] = std::move(it->second);
        matrices_ = std::move(next);
        dense_other_ = other_bytes;
        for (const tensor::WeightView& w : matrices) {
            if (matrices_.count(w.data)) continue;
            DenseMatrix m;
            const size_t size = w.row_bytes * size_t(w.n_rows);
            m.memory = DeviceBuffer(size);
            m.rows = {tensor::stored_type(w.type), m.memory.data(), w.row_bytes, w.n_cols};
            m.n_rows = int32_t(w.n_rows);
            // Synchronous from pageable memory: the model's weights are not pinned, and this
            // happens only when the placement changes.
            std::vector<uint8_t> stored;
            const uint8_t* src = w.data;
            if (w.type != tensor::stored_type(w.type)) {
                stored.resize(size);
                for (int64_t r = 0; r < w.n_rows; ++r) tensor::row_as_stored(w, r, stored.data() + size_t(r) * w.row_bytes);
                src = stored.data();
            }
            check(gpuMemcpy(m.memory.data(), src, size, gpuMemcpyHostToDevice), "uploading a dense matrix");
            traffic_.dense_bytes_uploaded += size;
            matrices_[w.data] = std::move(m);
        }
    }

    bool holds(const tensor::WeightView& w) const override { return matrices_.count(w.data) > 0; }

    void set_kv_cache(const KvShape& shape, uint16_t* host_k, uint16_t* host_v, int32_t n_past) override {
        const KvShape& old = kv_shape_;
        if (shape == old) return;
        if (shape.head_dim > gpu::kMaxHeadDim)
            fail(name_ + ": heads of " + std::to_string(shape.head_dim) + " values exceed the attention kernel's " +
                 std::to_string(gpu::kMaxHeadDim));
        if (used_bytes() - old.bytes() + shape.bytes() > budget_)
            fail(name_ + ": a KV cache of " + std::to_string(shape.bytes()) + " bytes exceeds the budget of " +
                 std::to_string(budget_) + " bytes (" + std::to_string(used_bytes() - old.bytes()) + " in use)");
        if (!pending_.empty()) wait();
        select();
        if (old.n_layer > 0) {
            copy_kv(old, n_past, [&](size_t offset, size_t bytes) {
                check(gpuMemcpy(reinterpret_cast<uint8_t*>(host_k) + offset, kv_k_.data() + offset, bytes,
                                gpuMemcpyDeviceToHost), "copying the KV cache back");
                check(gpuMemcpy(reinterpret_cast<uint8_t*>(host_v) + offset, kv_v_.data() + offset, bytes,
                                gpuMemcpyDeviceToHost), "copying the KV cache back");
            });
        }
        kv_k_ = DeviceBuffer();
        kv_v_ = DeviceBuffer();
        dev_scores_ = DeviceBuffer();
        kv_shape_ = {};
        if (shape.n_layer == 0) return;
        kv_k_ = DeviceBuffer(shape.bytes() / 2);
        kv_v_ = DeviceBuffer(shape.bytes() / 2);
        dev_scores_ = DeviceBuffer(size_t(shape.n_head) * size_t(shape.n_ctx) * sizeof(float));
        copy_kv(shape, n_past, [&](size_t offset, size_t bytes) {
            check(gpuMemcpy(kv_k_.data() + offset, reinterpret_cast<const uint8_t*>(host_k) + offset, bytes,
                            gpuMemcpyHostToDevice), "uploading the KV cache");
            check(gpuMemcpy(kv_v_.data() + offset, reinterpret_cast<const uint8_t*>(host_v) + offset, bytes,
                            gpuMemcpyHostToDevice), "uploading the KV cache");
            traffic_.dense_bytes_uploaded += 2 * bytes;
        });
        kv_shape_ = shape;
    }

    bool holds_kv_cache() const override { return kv_shape_.n_layer > 0; }

    void set_hot_neurons(int32_t il, const FfnRows& rows, std::span<const int32_t> neurons) override {
        if (!pending_.empty()) wait();  // results in flight land before their buffers can change
        select();
        for (const tensor::WeightView* w : {&rows.gate, &rows.up, &rows.down_t})
            if (w->n_rows && !supports(w->type))
                fail(name_ + ": layer " + std::to_string(il) + " has " + tensor::dtype_name(w->type) +
                     " FFN rows; the GPU kernels take F16, Q4_0 and Q8_0");
        const bool gated = rows.gate.n_rows > 0;
        if (gated && tensor::activation_type(rows.gate.type) != tensor::activation_type(rows.up.type))
            fail(name_ + ": layer " + std::to_string(il) + "'s gate and up rows need different activation types");
        const size_t per_neuron = (gated ? rows.gate.row_bytes : 0) + rows.up.row_bytes + rows.down_t.row_bytes;
        const uint64_t before = layers_.count(il) ? layers_.at(il).memory.bytes() : 0;
        const uint64_t after = uint64_t(per_neuron) * neurons.size();
        if (used_bytes() - before + after > budget_)
            fail(name_ + ": layer " + std::to_string(il) + "'s " + std::to_string(neurons.size()) + " hot neurons need " +
                 std::to_string(after) + " bytes, over the budget of " + std::to_string(budget_));
        ensure_scratch(rows, neurons.size());

        LayerRows next;
        next.gated = gated;
        next.ids.assign(neurons.begin(), neurons.end());
        next.local_of.assign(size_t(rows.up.n_rows), -1);
        next.memory = DeviceBuffer(after);
        uint8_t* base = next.memory.data();
        const size_t n = neurons.size();
        auto place = [&](gpu::DeviceRows& dst, const tensor::WeightView& w) {
            dst = {tensor::stored_type(w.type), base, w.row_bytes, w.n_cols};
            base += w.row_bytes * n;
        };
        if (gated) place(next.gate, rows.gate);
        place(next.up, rows.up);
        place(next.down, rows.down_t);

        // Rows already resident move within device memory; only the others cross the bus.
        auto it = layers_.find(il);
        const LayerRows* old = it == layers_.end() ? nullptr : &it->second;
        std::vector<int32_t> kept_to, kept_from, fresh_to, fresh_ids;
        for (size_t r = 0; r < n; ++r) {
            const int32_t id = next.ids[r];
            if (id < 0 || id >= rows.up.n_rows)
                fail(name_ + ": neuron " + std::to_string(id) + " is outside layer " + std::to_string(il));
            next.local_of[size_t(id)] = int32_t(r);
            const int32_t o = old && size_t(id) < old->local_of.size() ? old->local_of[size_t(id)] : -1;
            if (o >= 0 && old->gated == gated) {
                kept_to.push_back(int32_t(r));
                kept_from.push_back(o);
            } else {
                fresh_to.push_back(int32_t(r));
                fresh_ids.push_back(id);
            }
        }
        if (old && !kept_to.empty()) {
            DeviceBuffer maps = upload_indices(kept_to, kept_from);
            const int32_t k = int32_t(kept_to.size());
            if (gated) copy_rows(next.gate, maps, old->gate, k);
            copy_rows(next.up, maps, old->up, k);
            copy_rows(next.down, maps, old->down, k);
            check(gpuStreamSynchronize(stream_), "moving resident rows");
        }
        if (!fresh_to.empty()) upload_rows(next, rows, fresh_to, fresh_ids);
        traffic_.bytes_uploaded += uint64_t(per_neuron) * fresh_ids.size();
        layers_[il] = std::move(next);  // the old rows are freed here, after the stream finished with them
    }

    void begin_dots(int32_t il, const uint8_t* x, std::span<const int32_t> ids, float* g, float* v) override {
        if (!pending_.empty()) wait();  // the staging buffers are reused: one half-layer at a time
        select();
        const LayerRows& l = layer(il);
        const int32_t n = int32_t(ids.size());
        const size_t x_bytes = gpu::activation_bytes(l.up.type, l.up.n_cols);
        std::memcpy(host_x_.data(), x, x_bytes);
        translate(l, ids);
        async_upload(dev_x_.data(), host_x_.data(), x_bytes);
        async_upload(dev_local_.data(), host_local_.data(), sizeof(int32_t) * size_t(n));
        gpu::launch_dots(l.up, dev_x_.data(), dev_local_.as<int32_t>(), n, dev_v_.as<float>(), stream_);
        async_download(host_v_.data(), dev_v_.data(), sizeof(float) * size_t(n));
        pending_.push_back({v, host_v_.as<float>(), size_t(n)});
        if (l.gated) {
            gpu::launch_dots(l.gate, dev_x_.data(), dev_local_.as<int32_t>(), n, dev_g_.as<float>(), stream_);
            async_download(host_g_.data(), dev_g_.data(), sizeof(float) * size_t(n));
            pending_.push_back({g, host_g_.as<float>(), size_t(n)});
        }
        traffic_.rows_computed += uint64_t(n) * (l.gated ? 2 : 1);
    }

    void begin_down(int32_t il, std::span<const int32_t> ids, const float* coef, float* y) override {
        if (!pending_.empty()) wait();
        select();
        const LayerRows& l = layer(il);
        const int32_t n = int32_t(ids.size());
        translate(l, ids);
        std::memcpy(host_coef_.data(), coef, sizeof(float) * size_t(n));
        async_upload(dev_local_.data(), host_local_.data(), sizeof(int32_t) * size_t(n));
        async_upload(dev_coef_.data(), host_coef_.data(), sizeof(float) * size_t(n));
        gpu::launch_down(l.down, dev_local_.as<int32_t>(), dev_coef_.as<float>(), n, dev_partial_.as<float>(),
                         dev_y_.as<float>(), stream_);
        async_download(host_y_.data(), dev_y_.data(), sizeof(float) * size_t(l.down.n_cols));
        pending_.push_back({y, host_y_.as<float>(), size_t(l.down.n_cols)});
        for (int32_t j = 0; j < n; ++j) traffic_.rows_computed += coef[j] != 0.0f;
    }

    void begin_matmul(const tensor::WeightView& w, const uint8_t* x, size_t x_stride, int32_t n_tokens,
                      float* y) override {
        if (!pending_.empty()) wait();
        select();
        auto it = matrices_.find(w.data);
        if (it == matrices_.end()) fail(name_ + ": a matrix of " + std::to_string(w.n_rows) + " rows is not resident");
        const DenseMatrix& m = it->second;
        const size_t x_bytes = gpu::activation_bytes(tensor::stored_type(w.type), w.n_cols);
        const size_t y_count = size_t(n_tokens) * size_t(m.n_rows);
        matmul_in_.reserve(x_bytes * size_t(n_tokens));
        matmul_out_.reserve(y_count * sizeof(float));
        for (int32_t t = 0; t < n_tokens; ++t)
            std::memcpy(matmul_in_.host.data() + size_t(t) * x_bytes, x + size_t(t) * x_stride, x_bytes);
        async_upload(matmul_in_.dev.data(), matmul_in_.host.data(), x_bytes * size_t(n_tokens));
        gpu::launch_matmul(m.rows, m.n_rows, matmul_in_.dev.data(), n_tokens, matmul_out_.dev.as<float>(), stream_);
        async_download(matmul_out_.host.data(), matmul_out_.dev.data(), y_count * sizeof(float));
        pending_.push_back({y, matmul_out_.host.as<float>(), y_count});
        ++traffic_.matmuls;
    }

    void begin_attention(int32_t il, int32_t pos0, int32_t n_tokens, const float* q, const float* k, const float* v,
                         float* out) override {
        const KvShape& kv = kv_shape_;
        if (kv.n_layer == 0) fail(name_ + ": no KV cache is held");
        if (il < 0 || il >= kv.n_layer || pos0 < 0 || n_tokens < 0 || pos0 + n_tokens > kv.n_ctx)
            fail(name_ + ": attention at layer " + std::to_string(il) + ", positions " + std::to_string(pos0) + ".." +
                 std::to_string(pos0 + n_tokens) + " is outside its KV cache");
        if (!pending_.empty()) wait();
        select();
        const size_t n_gqa = size_t(kv.n_embd_gqa()), n_embd = size_t(kv.n_head) * size_t(kv.head_dim);
        const size_t q_count = size_t(n_tokens) * n_embd, kv_count = size_t(n_tokens) * n_gqa;
        attention_in_.reserve((q_count + 2 * kv_count) * sizeof(float));
        attention_out_.reserve(q_count * sizeof(float));
        float* host_in = attention_in_.host.as<float>();
        std::memcpy(host_in, q, q_count * sizeof(float));
        std::memcpy(host_in + q_count, k, kv_count * sizeof(float));
        std::memcpy(host_in + q_count + kv_count, v, kv_count * sizeof(float));
        async_upload(attention_in_.dev.data(), host_in, (q_count + 2 * kv_count) * sizeof(float));
        const float* dev_q = attention_in_.dev.as<float>();
        const size_t layer = size_t(il) * size_t(kv.n_ctx) * n_gqa;
        uint16_t* k_layer = kv_k_.as<uint16_t>() + layer;
        uint16_t* v_layer = kv_v_.as<uint16_t>() + layer;
        gpu::launch_store_half(dev_q + q_count, n_tokens, int32_t(n_gqa), k_layer + size_t(pos0) * n_gqa, n_gqa, stream_);
        gpu::launch_store_half(dev_q + q_count + kv_count, n_tokens, int32_t(n_gqa), v_layer + size_t(pos0) * n_gqa, n_gqa,
                               stream_);
        for (int32_t t = 0; t < n_tokens; ++t) {
            const gpu::AttentionArgs a{dev_q + size_t(t) * n_embd, k_layer, v_layer, n_gqa, pos0 + t + 1,
                                       kv.n_head, kv.n_head / kv.n_head_kv, kv.head_dim,
                                       1.0f / std::sqrt(float(kv.head_dim)), dev_scores_.as<float>(),
                                       attention_out_.dev.as<float>() + size_t(t) * n_embd};
            gpu::launch_attention(a, stream_);
        }
        async_download(attention_out_.host.data(), attention_out_.dev.data(), q_count * sizeof(float));
        pending_.push_back({out, attention_out_.host.as<float>(), q_count});
        ++traffic_.attentions;
    }

    void wait() override {
        const gpuError_t e = gpuStreamSynchronize(stream_);
        std::vector<PendingCopy> done = std::exchange(pending_, {});
        check(e, "running the hot-neuron kernels");
        for (const PendingCopy& c : done) std::memcpy(c.dst, c.src, c.n * sizeof(float));
    }

    DeviceTraffic traffic() const override { return traffic_; }

private:
    // The runtime's current device is per host thread, and the session may call from any one.
    void select() const { check(gpuSetDevice(index_), "selecting the GPU"); }

    const LayerRows& layer(int32_t il) const {
        auto it = layers_.find(il);
        if (it == layers_.end()) fail(name_ + ": layer " + std::to_string(il) + " has no resident neurons");
        return it->second;
    }

    // Local row numbers of `ids` into the pinned index buffer.
    void translate(const LayerRows& l, std::span<const int32_t> ids) {
        if (ids.size() > scratch_ids_) fail(name_ + ": more neurons asked than are resident");
        int32_t* out = host_local_.as<int32_t>();
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

    uint64_t dense_bytes() const {
        uint64_t bytes = dense_other_;
        for (const auto& [data, m] : matrices_) bytes += m.memory.bytes();
        return bytes;
    }
    uint64_t ffn_bytes() const {
        uint64_t bytes = 0;
        for (const auto& [il, l] : layers_) bytes += l.memory.bytes();
        return bytes;
    }

    // fn(byte offset, bytes) for each layer's first n_past positions of a cache of `shape`
    // (the same offsets in K and V, on the host and on the device).
    template <class Fn>
    static void copy_kv(const KvShape& shape, int32_t n_past, Fn fn) {
        const size_t row = size_t(shape.n_embd_gqa()) * 2;
        for (int32_t il = 0; il < shape.n_layer; ++il)
            if (n_past > 0) fn(size_t(il) * size_t(shape.n_ctx) * row, size_t(n_past) * row);
    }

    // Grow-only buffers for the largest layer seen; waits for queued work before replacing any.
    void ensure_scratch(const FfnRows& rows, size_t n_ids) {
        const size_t ids = std::max(scratch_ids_, std::max<size_t>(n_ids, 1));
        const int64_t n_in = std::max(scratch_in_, rows.up.n_cols);
        const int64_t n_out = std::max(scratch_out_, rows.down_t.n_cols);
        if (ids == scratch_ids_ && n_in == scratch_in_ && n_out == scratch_out_) return;
        check(gpuStreamSynchronize(stream_), "finishing queued work");
        const size_t x_bytes = size_t(n_in) * 2 + size_t(n_in / 32) * 34;  // the larger of F16 and Q8_0
        dev_x_ = DeviceBuffer(x_bytes);
        host_x_ = PinnedBuffer(x_bytes);
        dev_local_ = DeviceBuffer(ids * 4);
        host_local_ = PinnedBuffer(ids * 4);
        dev_g_ = DeviceBuffer(ids * 4);
        host_g_ = PinnedBuffer(ids * 4);
        dev_v_ = DeviceBuffer(ids * 4);
        host_v_ = PinnedBuffer(ids * 4);
        dev_coef_ = DeviceBuffer(ids * 4);
        host_coef_ = PinnedBuffer(ids * 4);
        dev_partial_ = DeviceBuffer(size_t(gpu::down_chunks(int32_t(ids))) * size_t(n_out) * 4);
        dev_y_ = DeviceBuffer(size_t(n_out) * 4);
        host_y_ = PinnedBuffer(size_t(n_out) * 4);
        scratch_ids_ = ids;
        scratch_in_ = n_in;
        scratch_out_ = n_out;
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
    void copy_rows(const gpu::DeviceRows& dst, const DeviceBuffer& maps, const gpu::DeviceRows& src, int32_t n) {
        gpu::launch_copy_rows(const_cast<uint8_t*>(dst.data), maps.as<int32_t>(), src.data, maps.as<int32_t>() + n, n,
                              dst.row_bytes, stream_);
    }

    // The new rows go up packed in one pinned staging copy, then land in their places on the device.
    void upload_rows(LayerRows& next, const FfnRows& rows, const std::vector<int32_t>& to, const std::vector<int32_t>& ids) {
        const size_t n = ids.size();
        std::vector<int32_t> staged(n);
        for (size_t j = 0; j < n; ++j) staged[j] = int32_t(j);
        DeviceBuffer maps = upload_indices(to, staged);
        auto one = [&](const gpu::DeviceRows& dst, const tensor::WeightView& w) {
            PinnedBuffer host(w.row_bytes * n);
            for (size_t j = 0; j < n; ++j) tensor::row_as_stored(w, ids[j], host.data() + j * w.row_bytes);
            DeviceBuffer dev(w.row_bytes * n);
            async_upload(dev.data(), host.data(), host.bytes());
            const gpu::DeviceRows packed{tensor::stored_type(w.type), dev.data(), w.row_bytes, w.n_cols};
            copy_rows(dst, maps, packed, int32_t(n));
            check(gpuStreamSynchronize(stream_), "uploading hot rows");
        };
        if (next.gated) one(next.gate, rows.gate);
        one(next.up, rows.up);
        one(next.down, rows.down_t);
    }

    int index_;
    std::string name_;
    uint64_t budget_;
    uint64_t dense_other_ = 0;
    gpuStream_t stream_{};
    std::map<int32_t, LayerRows> layers_;
    std::map<const uint8_t*, DenseMatrix> matrices_;  // keyed by the host copy's data
    KvShape kv_shape_;
    DeviceBuffer kv_k_, kv_v_, dev_scores_;
    DeviceTraffic traffic_;
    std::vector<PendingCopy> pending_;
    size_t scratch_ids_ = 0;
    int64_t scratch_in_ = 0, scratch_out_ = 0;
    DeviceBuffer dev_x_, dev_local_, dev_g_, dev_v_, dev_coef_, dev_partial_, dev_y_;
    PinnedBuffer host_x_, host_local_, host_g_, host_v_, host_coef_, host_y_;
    Staging matmul_in_, matmul_out_, attention_in_, attention_out_;
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

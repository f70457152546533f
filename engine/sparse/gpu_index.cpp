#include "sparse/gpu_index.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "common/error.h"
#include "common/utf8_path.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

namespace ember::sparse {
namespace {

constexpr uint32_t kTypeI32 = 18;
constexpr const char* kBlockCountKey = "generic.gpu_index.block_count";
constexpr const char* kVramCapacityKey = "split.vram_capacity";

std::string idx_name(int32_t il) { return "blk." + std::to_string(il) + ".gpu_idx"; }
std::string bucket_name(int32_t il) { return "blk." + std::to_string(il) + ".gpu_bucket"; }

// The reference enforces the stored type of every key it reads, so Ember does too.
const gguf::Value& require_key(const gguf::File& f, const char* key, gguf::ValueType type) {
    const gguf::Value* v = f.find(key);
    if (!v) fail(f.path() + ": GPU index lacks metadata key '" + key + "'");
    if (v->type != type)
        fail(f.path() + ": metadata key '" + key + "' has type " + gguf::value_type_name(v->type) + ", expected " +
             gguf::value_type_name(type));
    return *v;
}

const gguf::TensorInfo& require_tensor(const gguf::File& f, size_t pos, const std::string& name, int64_t max_len) {
    const gguf::TensorInfo& t = f.tensors()[pos];
    const std::string what = f.path() + ": tensor #" + std::to_string(pos) + " '" + t.name + "'";
    if (t.name != name) fail(what + " is where '" + name + "' must be (tensors are positional)");
    if (t.type != kTypeI32) fail(what + " has type id " + std::to_string(t.type) + ", expected I32 (18)");
    if (t.ne.size() != 1) fail(what + " has " + std::to_string(t.ne.size()) + " dimensions, expected 1");
    if (t.ne[0] > max_len)
        fail(what + " has " + std::to_string(t.ne[0]) + " elements, expected " +
             (name.ends_with("gpu_idx") ? "n_ff = " : "at most n_ff = ") + std::to_string(max_len));
    return t;
}

std::vector<int32_t> load_i32(const gguf::TensorInfo& t) {
    std::vector<int32_t> v(size_t(t.ne[0]));
    if (!v.empty()) std::memcpy(v.data(), t.data, v.size() * sizeof(int32_t));
    return v;
}

void check_hot_ids(const std::vector<int32_t>& ids, int64_t n_ff, const std::string& where) {
    for (size_t r = 0; r < ids.size(); ++r) {
        if (ids[r] < 0 || ids[r] >= n_ff)
            fail(where + " element " + std::to_string(r) + " = " + std::to_string(ids[r]) + " is outside [0, n_ff = " +
                 std::to_string(n_ff) + ")");
        if (r > 0 && ids[r] <= ids[r - 1])
            fail(where + " element " + std::to_string(r) + " = " + std::to_string(ids[r]) + " follows " +
                 std::to_string(ids[r - 1]) + ": neuron ids must be ascending and unique");
    }
}

std::vector<uint8_t> as_bytes(const std::vector<int32_t>& v) {
    std::vector<uint8_t> bytes(v.size() * sizeof(int32_t));
    if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
}

}  // namespace

std::vector<int32_t> GpuIndex::mask(int32_t il) const {
    if (il < 0 || il >= n_layer())
        fail("GPU index: layer " + std::to_string(il) + " out of range (n_layer = " + std::to_string(n_layer()) + ")");
    std::vector<int32_t> m(size_t(n_ff), 0);
    for (int32_t id : hot[size_t(il)])
        if (id >= 0 && id < n_ff) m[size_t(id)] = 1;
    return m;
}

std::string gpu_index_path(const std::string& model_path) { return model_path + ".generated.gpuidx"; }

GpuIndex read_gpu_index(const std::string& path, int32_t n_layer, int64_t n_ff) {
    if (n_layer < 0 || n_ff <= 0 || n_ff > INT32_MAX)
        fail(path + ": cannot check a GPU index against n_layer = " + std::to_string(n_layer) +
             ", n_ff = " + std::to_string(n_ff));
    auto f = gguf::File::open(path, gguf::MappedFile::Mode::Map, {}, gguf::TypeIds::PowerInfer);

    const auto& arch = require_key(*f, "general.architecture", gguf::ValueType::String);
    const std::string& arch_str = std::get<std::string>(arch.data);
    if (arch_str != kGpuIndexArchitecture)
        fail(path + ": metadata key 'general.architecture' = '" + arch_str + "', expected '" +
             kGpuIndexArchitecture + "': not a GPU index");
    const auto& blocks = require_key(*f, kBlockCountKey, gguf::ValueType::U32);
    const int64_t block_count = std::get<int64_t>(blocks.data);
    if (block_count != n_layer)
        fail(path + ": metadata key '" + kBlockCountKey + "' = " + std::to_string(block_count) +
             ", the model has n_layer = " + std::to_string(n_layer));
    const auto& cap = require_key(*f, kVramCapacityKey, gguf::ValueType::U64);

    GpuIndex index;
    index.n_ff = n_ff;
    index.vram_capacity = uint64_t(std::get<int64_t>(cap.data));
    if (f->find(kGpuIndexSourceKey))
        index.source = std::get<std::string>(require_key(*f, kGpuIndexSourceKey, gguf::ValueType::String).data);

    const size_t n_tensors = f->tensors().size();
    if (n_tensors != size_t(2) * size_t(n_layer))
        fail(path + ": GPU index has " + std::to_string(n_tensors) + " tensors, expected 2 * n_layer = " +
             std::to_string(2 * int64_t(n_layer)));

    index.hot.resize(size_t(n_layer));
    for (int32_t il = 0; il < n_layer; ++il) {
        const size_t pos = size_t(il) * 2;
        const auto& ti = require_tensor(*f, pos, idx_name(il), n_ff);
        const std::string idx_where = path + ": tensor #" + std::to_string(pos) + " '" + ti.name + "'";
        if (ti.ne[0] != n_ff)
            fail(idx_where + " has " + std::to_string(ti.ne[0]) + " elements, expected n_ff = " + std::to_string(n_ff));
        const auto& tb = require_tensor(*f, pos + 1, bucket_name(il), n_ff);
        const std::string bucket_where = path + ": tensor #" + std::to_string(pos + 1) + " '" + tb.name + "'";

        const std::vector<int32_t> mask = load_i32(ti);
        int64_t n_marked = 0;
        for (size_t i = 0; i < mask.size(); ++i) {
            if (mask[i] != 0 && mask[i] != 1)
                fail(idx_where + " element " + std::to_string(i) + " = " + std::to_string(mask[i]) +
                     ", expected 0 or 1");
            n_marked += mask[i];
        }
        std::vector<int32_t> ids = load_i32(tb);
        check_hot_ids(ids, n_ff, bucket_where);
        if (int64_t(ids.size()) != n_marked)
            fail(bucket_where + " lists " + std::to_string(ids.size()) + " neurons, but '" + ti.name + "' marks " +
                 std::to_string(n_marked));
        for (size_t r = 0; r < ids.size(); ++r)
            if (mask[size_t(ids[r])] != 1)
                fail(bucket_where + " element " + std::to_string(r) + " = neuron " + std::to_string(ids[r]) +
                     ", which '" + ti.name + "' marks 0");
        index.hot[size_t(il)] = std::move(ids);
    }
    return index;
}

void write_gpu_index(const std::string& path, const GpuIndex& index) {
    if (index.n_ff <= 0 || index.n_ff > INT32_MAX)
        fail(path + ": cannot write a GPU index with n_ff = " + std::to_string(index.n_ff));
    if (index.hot.size() > UINT32_MAX)
        fail(path + ": cannot write a GPU index with " + std::to_string(index.hot.size()) + " layers");
    for (int32_t il = 0; il < index.n_layer(); ++il)
        check_hot_ids(index.hot[size_t(il)], index.n_ff, path + ": hot neurons of layer " + std::to_string(il));

    // Key order and types as PowerInfer's exporter writes them; the Ember key goes last.
    gguf::Writer w(gguf::TypeIds::PowerInfer);
    w.set("general.architecture", gguf::Value::string(kGpuIndexArchitecture));
    w.set(kBlockCountKey, gguf::Value::u32(uint32_t(index.hot.size())));
    w.set(kVramCapacityKey, gguf::Value::u64(index.vram_capacity));
    if (!index.source.empty()) w.set(kGpuIndexSourceKey, gguf::Value::string(index.source));
    for (int32_t il = 0; il < index.n_layer(); ++il) {
        const auto& ids = index.hot[size_t(il)];
        w.add_tensor(idx_name(il), {index.n_ff}, kTypeI32, as_bytes(index.mask(il)));
        // ne = [0] when the layer has no hot neurons: an empty blob, as PowerInfer writes it.
        w.add_tensor(bucket_name(il), {int64_t(ids.size())}, kTypeI32, as_bytes(ids));
    }
    w.write(path, "PWRI");
}

// ---- Freshness ------------------------------------------------------------------------------

uint64_t hash_activation(const std::vector<std::vector<double>>& activation) {
    uint64_t h = 0xcbf29ce484222325ull;
    auto mix = [&](uint64_t v) {
        for (int b = 0; b < 8; ++b) {
            h ^= (v >> (8 * b)) & 0xff;
            h *= 0x100000001b3ull;
        }
    };
    mix(activation.size());
    for (const auto& layer : activation) {
        mix(layer.size());
        for (double x : layer) {
            uint64_t bits;
            std::memcpy(&bits, &x, sizeof bits);
            mix(bits);
        }
    }
    return h;
}

void stamp_model_file(const std::string& model_path, GpuIndexSource& source) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const auto size = fs::file_size(utf8_path(model_path), ec);
    if (ec) fail(model_path + ": cannot read the model file size: " + ec.message());
    const auto mtime = fs::last_write_time(utf8_path(model_path), ec);
    if (ec) fail(model_path + ": cannot read the model file time: " + ec.message());
    source.model_bytes = uint64_t(size);
    source.model_mtime_ns =
        int64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count());
}

std::string format_gpu_index_source(const GpuIndexSource& s) {
    std::ostringstream o;
    o << "ember-topk/1 model_bytes=" << s.model_bytes << " model_mtime_ns=" << s.model_mtime_ns
      << " activation_fnv1a=" << std::hex << s.activation_hash << std::dec << " vram_capacity=" << s.vram_capacity
      << " capacity=" << s.capacity_neurons << " bucket=" << s.bucket;
    return o.str();
}

GpuIndexReuse decide_gpu_index_reuse(std::optional<GpuIndex> existing, const std::string& expected_source,
                                     bool reset_gpu_index) {
    GpuIndexReuse r;
    if (reset_gpu_index) {
        r.reason = "--reset-gpu-index given: regenerating";
    } else if (!existing) {
        r.reason = "no GPU index yet: generating";
    } else if (existing->source.empty()) {
        r.reason = "GPU index has no " + std::string(kGpuIndexSourceKey) +
                   " (written by PowerInfer): its model, statistics and budget are unknown, regenerating";
    } else if (existing->source != expected_source) {
        r.reason = "GPU index is stale: made for '" + existing->source + "', now '" + expected_source +
                   "': regenerating";
    } else {
        r.reuse = true;
        r.reason = "GPU index matches the model, statistics and budget: reusing";
        r.index = std::move(existing);
    }
    return r;
}

GpuIndexReuse check_gpu_index(const std::string& path, int32_t n_layer, int64_t n_ff,
                              const std::string& expected_source, bool reset_gpu_index) {
    if (reset_gpu_index) return decide_gpu_index_reuse(std::nullopt, expected_source, true);
    std::error_code ec;
    if (!std::filesystem::exists(utf8_path(path), ec)) return decide_gpu_index_reuse(std::nullopt, expected_source, false);
    try {
        return decide_gpu_index_reuse(read_gpu_index(path, n_layer, n_ff), expected_source, false);
    } catch (const EngineError& e) {
        GpuIndexReuse r;
        r.reason = std::string("GPU index unusable, regenerating: ") + e.what();
        return r;
    }
}

}  // namespace ember::sparse

#pragma once
// `<model>.generated.gpuidx`: PowerInfer's GPU index file, read and written in its exact format
// (docs/FORMATS.md §8.1), plus the decision whether an existing one may be reused (§8.3).
//
// Layout: GGUF v3 with magic "PWRI"; keys, in this order,
//   general.architecture            string "generic.gpu_index"
//   generic.gpu_index.block_count   u32    n_layer
//   split.vram_capacity             u64    FFN bytes R the index was solved for
//   ember.gpu_index.source          string Ember's freshness record (Ember only; PowerInfer ignores it)
// and 2 * n_layer tensors, positional and interleaved:
//   #2i   blk.i.gpu_idx     I32 [n_ff]   1 where neuron i is on the device, else 0
//   #2i+1 blk.i.gpu_bucket  I32 [n_hot]  the hot neuron ids, ascending (n_hot may be 0)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ember::sparse {

inline constexpr const char* kGpuIndexArchitecture = "generic.gpu_index";
inline constexpr const char* kGpuIndexSourceKey = "ember.gpu_index.source";

struct GpuIndex {
    int64_t n_ff = 0;                        // neurons per layer
    uint64_t vram_capacity = 0;              // split.vram_capacity
    std::vector<std::vector<int32_t>> hot;   // [n_layer][n_hot] gpu_bucket: ascending neuron ids
    std::string source;                      // ember.gpu_index.source; empty = absent (PowerInfer's own files)

    int32_t n_layer() const { return int32_t(hot.size()); }
    // gpu_idx of one layer: [n_ff] 0/1.
    std::vector<int32_t> mask(int32_t il) const;
};

// "<model path>.generated.gpuidx", next to the model (§8.1).
std::string gpu_index_path(const std::string& model_path);

// Reads and validates `path` against the model: architecture string, block_count == n_layer,
// 2 * n_layer tensors named and ordered as above, type I32, 1-D, gpu_idx of length n_ff with
// values 0/1, gpu_bucket ascending, unique, in [0, n_ff) and exactly the neurons gpu_idx marks.
// Every error names the file and the key or tensor. The source key is optional.
GpuIndex read_gpu_index(const std::string& path, int32_t n_layer, int64_t n_ff);

// Writes `index` (validated as read_gpu_index would) through a temporary file. With an empty
// `source` the bytes are identical to PowerInfer's exporter for the same content.
void write_gpu_index(const std::string& path, const GpuIndex& index);

// ---- Freshness ------------------------------------------------------------------------------

// What the index was solved from. PowerInfer reuses an index whenever its stored capacity is at
// most the current budget, even after the model, the statistics or the budget changed
// (§8.3); Ember records these and reuses only on an exact match.
struct GpuIndexSource {
    uint64_t model_bytes = 0;       // model file size
    int64_t model_mtime_ns = 0;     // model file modification time
    uint64_t activation_hash = 0;   // hash_activation() of the statistics
    uint64_t vram_capacity = 0;     // R, the FFN byte budget
    int64_t capacity_neurons = 0;   // what the solver was given
    int64_t bucket = 256;
};

// FNV-1a 64 over n_layer, each layer's n_ff and every value's bits: any change to the
// statistics (not only their sums) changes it.
uint64_t hash_activation(const std::vector<std::vector<double>>& activation);

// Fills model_bytes and model_mtime_ns from the file system; fails naming the path.
void stamp_model_file(const std::string& model_path, GpuIndexSource& source);

// The canonical string stored under ember.gpu_index.source, e.g.
// "ember-topk/1 model_bytes=5376256 model_mtime_ns=... activation_fnv1a=0123abcd... vram_capacity=... capacity=3072 bucket=256".
// The leading tag names the solver, so a change of algorithm also invalidates old indexes.
std::string format_gpu_index_source(const GpuIndexSource& source);

struct GpuIndexReuse {
    bool reuse = false;
    std::string reason;              // why it is (not) reused, for the log
    std::optional<GpuIndex> index;   // the loaded index when reuse is true
};

// Decision on an index already read (or nullopt when there is none): reuse only when it carries
// Ember's source record and that equals `expected_source`; `reset_gpu_index`
// (--reset-gpu-index) always regenerates. A PowerInfer-written index has no record, so its
// provenance is unknown and it is regenerated.
GpuIndexReuse decide_gpu_index_reuse(std::optional<GpuIndex> existing, const std::string& expected_source,
                                     bool reset_gpu_index);

// The same on a path: a missing file or one that fails validation (reason = the error)
// is regenerated. The file is not read at all when reset_gpu_index is set.
GpuIndexReuse check_gpu_index(const std::string& path, int32_t n_layer, int64_t n_ff,
                              const std::string& expected_source, bool reset_gpu_index);

}  // namespace ember::sparse

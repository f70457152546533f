#include "sparse/placement.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iterator>
#include <numeric>

#include "common/byte_size.h"
#include "common/error.h"
#include "gguf/ggml_type.h"

namespace ember::sparse {
namespace {

void check_activation(const std::vector<std::vector<double>>& activation) {
    for (size_t il = 0; il < activation.size(); ++il) {
        const auto& a = activation[il];
        if (int64_t(a.size()) > int64_t(INT32_MAX))
            fail("activation layer " + std::to_string(il) + ": " + std::to_string(a.size()) +
                 " neurons exceed the int32 neuron ids of the GPU index");
        for (size_t i = 0; i < a.size(); ++i)
            if (!std::isfinite(a[i]) || a[i] < 0.0)
                fail("activation layer " + std::to_string(il) + " neuron " + std::to_string(i) + " = " +
                     std::to_string(a[i]) + ": activation statistics must be finite and non-negative");
    }
}

// Neuron ids of one layer, hottest first; equal values keep the lower id first.
std::vector<int32_t> hot_order(const std::vector<double>& a) {
    std::vector<int32_t> ids(a.size());
    std::iota(ids.begin(), ids.end(), 0);
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t x, int32_t y) { return a[size_t(x)] > a[size_t(y)]; });
    return ids;
}

uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace

// ---- Solver -------------------------------------------------------------------------------

std::vector<int64_t> solve_hot_counts(const std::vector<std::vector<double>>& activation, int64_t capacity_neurons,
                                      int64_t bucket) {
    if (bucket <= 0) fail("solve_hot_counts: bucket = " + std::to_string(bucket) + ", must be positive");
    if (capacity_neurons < 0)
        fail("solve_hot_counts: capacity = " + std::to_string(capacity_neurons) + " neurons, must not be negative");
    check_activation(activation);

    struct Bucket {
        double benefit;
        int32_t il;
        int64_t j;      // bucket index inside the layer
        int64_t size;   // bucket, or n_ff % bucket for a trailing partial one
    };
    std::vector<Bucket> buckets;
    for (size_t il = 0; il < activation.size(); ++il) {
        std::vector<double> sorted = activation[il];
        std::sort(sorted.begin(), sorted.end(), std::greater<>());
        const int64_t n_ff = int64_t(sorted.size());
        for (int64_t begin = 0, j = 0; begin < n_ff; begin += bucket, ++j) {
            const int64_t end = std::min(n_ff, begin + bucket);
            // Sum in descending order, in double: deterministic and well above the float32
            // precision PowerInfer's torch sums have.
            double sum = 0.0;
            for (int64_t i = begin; i < end; ++i) sum += sorted[size_t(i)];
            buckets.push_back({sum, int32_t(il), j, end - begin});
        }
    }

    const int64_t k = std::min<int64_t>(capacity_neurons / bucket, int64_t(buckets.size()));
    auto better = [](const Bucket& x, const Bucket& y) {
        if (x.benefit != y.benefit) return x.benefit > y.benefit;
        if (x.il != y.il) return x.il < y.il;
        return x.j < y.j;
    };
    std::partial_sort(buckets.begin(), buckets.begin() + k, buckets.end(), better);

    std::vector<int64_t> counts(activation.size(), 0);
    for (int64_t b = 0; b < k; ++b) counts[size_t(buckets[size_t(b)].il)] += buckets[size_t(b)].size;
    return counts;
}

std::vector<std::vector<int32_t>> hot_neurons(const std::vector<std::vector<double>>& activation,
                                              const std::vector<int64_t>& counts) {
    if (counts.size() != activation.size())
        fail("hot_neurons: " + std::to_string(counts.size()) + " hot counts for " +
             std::to_string(activation.size()) + " activation layers");
    check_activation(activation);
    std::vector<std::vector<int32_t>> hot(activation.size());
    for (size_t il = 0; il < activation.size(); ++il) {
        const int64_t n_ff = int64_t(activation[il].size());
        if (counts[il] < 0 || counts[il] > n_ff)
            fail("hot_neurons: layer " + std::to_string(il) + " hot count " + std::to_string(counts[il]) +
                 " is outside [0, n_ff = " + std::to_string(n_ff) + "]");
        std::vector<int32_t> ids = hot_order(activation[il]);
        ids.resize(size_t(counts[il]));
        std::sort(ids.begin(), ids.end());
        hot[il] = std::move(ids);
    }
    return hot;
}

// ---- Budget -> capacity ---------------------------------------------------------------------

uint64_t neuron_row_bytes(int64_t n_embd, uint32_t ggml_type, bool has_gate) {
    const gguf::GgmlTypeInfo* info = gguf::ggml_type_info(ggml_type);
    if (!info) fail("neuron_row_bytes: unknown GGML type id " + std::to_string(ggml_type));
    if (n_embd <= 0 || n_embd % info->block != 0)
        fail("neuron_row_bytes: n_embd = " + std::to_string(n_embd) + " is not a positive multiple of the " +
             info->name + " block size " + std::to_string(info->block));
    const uint64_t row = uint64_t(n_embd) / info->block * info->block_bytes;
    return (has_gate ? 3 : 2) * row;
}

namespace {

void check_costs(const PlacementCosts& costs) {
    const size_t n_layer = costs.attn_bytes.size();
    auto check_len = [&](size_t n, const char* field) {
        if (n != n_layer)
            fail(std::string("placement costs: ") + field + " has " + std::to_string(n) + " layers, attn_bytes has " +
                 std::to_string(n_layer));
    };
    check_len(costs.predictor_bytes.size(), "predictor_bytes");
    check_len(costs.ffn_norm_bytes.size(), "ffn_norm_bytes");
    check_len(costs.neuron_bytes.size(), "neuron_bytes");
    check_len(costs.n_ff.size(), "n_ff");
    if (!costs.dense_ffn_bytes.empty()) check_len(costs.dense_ffn_bytes.size(), "dense_ffn_bytes");
    if (costs.bucket <= 0) fail("placement costs: bucket = " + std::to_string(costs.bucket) + ", must be positive");
    for (size_t il = 0; il < n_layer; ++il)
        if (costs.n_ff[il] < 0)
            fail("placement costs: n_ff of layer " + std::to_string(il) + " = " + std::to_string(costs.n_ff[il]));
}

// The placement before anything is placed, for valid costs; its explanation is set when the
// budget does not exceed the compute margin, and then nothing can be: whatever runs on the
// device needs its scratch.
Placement nothing_placed(const PlacementCosts& costs, uint64_t budget_bytes) {
    check_costs(costs);
    Placement p;
    p.n_layer = int32_t(costs.attn_bytes.size());
    p.budget_bytes = budget_bytes;
    if (budget_bytes <= costs.margin_bytes)
        p.explanation = "budget " + byte_size(budget_bytes) + " does not exceed the compute margin of " +
                        byte_size(costs.margin_bytes) + ": running everything on CPU";
    return p;
}

}  // namespace

Placement plan_layer_offload(const PlacementCosts& costs, uint64_t budget_bytes) {
    Placement p = nothing_placed(costs, budget_bytes);
    if (!p.explanation.empty()) return p;
    const size_t n_layer = costs.attn_bytes.size();
    uint64_t left = budget_bytes - costs.margin_bytes;
    const uint64_t kv_layer = n_layer ? (costs.kv_k_bytes + costs.kv_v_bytes) / n_layer : 0;
    for (size_t il = 0; il < n_layer; ++il) {
        const uint64_t dense = costs.attn_bytes[il] + costs.ffn_norm_bytes[il] +
                               (costs.dense_ffn_bytes.empty() ? 0 : costs.dense_ffn_bytes[il]);
        if (dense + kv_layer > left) {
            const std::string rest = il + 1 == n_layer ? "layer " + std::to_string(il)
                                                       : "layers " + std::to_string(il) + ".." + std::to_string(n_layer - 1);
            p.explanation = rest + " and the output layer on the CPU (layer " + std::to_string(il) + " needs " +
                            byte_size(dense + kv_layer) + ", " + byte_size(left) + " left of the " + byte_size(budget_bytes) +
                            " budget once " + byte_size(costs.margin_bytes) + " is kept for the device's own work)";
            break;
        }
        left -= dense + kv_layer;
        p.dense_bytes += dense;
        p.kv_bytes += kv_layer;
        p.n_attn_layers = p.n_ffn_layers = p.n_ffn_norm_layers = p.n_kv_layers = int32_t(il + 1);
    }
    if (p.n_attn_layers == int32_t(n_layer)) {
        p.kv_k_on_device = p.kv_v_on_device = true;
        if (costs.output_bytes <= left) {
            p.dense_bytes += costs.output_bytes;
            p.output_on_device = p.dense_complete = true;
        } else {
            p.explanation = "the output layer on the CPU (it needs " + byte_size(costs.output_bytes) + ", " +
                            byte_size(left) + " left)";
        }
    }
    p.n_gpu_layers = p.n_attn_layers + (p.output_on_device ? 1 : 0);
    p.margin_bytes = p.n_attn_layers > 0 || p.output_on_device ? costs.margin_bytes : 0;
    p.bytes_used = p.margin_bytes + p.dense_bytes + p.kv_bytes;
    return p;
}

Placement plan_placement(const PlacementCosts& costs, uint64_t budget_bytes) {
    Placement p = nothing_placed(costs, budget_bytes);
    if (!p.explanation.empty()) return p;
    const size_t n_layer = costs.attn_bytes.size();
    uint64_t left = budget_bytes - costs.margin_bytes;
    p.margin_bytes = costs.margin_bytes;

    // Dense groups in PowerInfer's priority order; the first that does not fit stops the rest.
    auto place = [&](uint64_t need) {
        if (need > left) return false;
        left -= need;
        p.dense_bytes += need;
        return true;
    };
    auto stopped = [&](const std::string& what, uint64_t need) {
        return what + " needs " + byte_size(need) + ", " + byte_size(left) + " left of the " + byte_size(budget_bytes) +
               " budget once " + byte_size(costs.margin_bytes) + " is kept for the device's own work";
    };

    bool ok = true;
    for (size_t il = 0; ok && il < n_layer; ++il) {
        if (place(costs.attn_bytes[il])) {
            p.n_attn_layers = int32_t(il + 1);
            continue;
        }
        ok = false;
        p.explanation = (il == 0 ? std::string("budget too small for attention: ")
                                 : "budget too small for attention beyond layer " + std::to_string(il - 1) + ": ") +
                        "running FFN on CPU only (" + stopped("attention of layer " + std::to_string(il),
                                                               costs.attn_bytes[il]) + ")";
    }
    for (size_t il = 0; ok && il < n_layer; ++il) {
        if (place(costs.predictor_bytes[il])) {
            p.n_predictor_layers = int32_t(il + 1);
            continue;
        }
        ok = false;
        p.explanation = "budget too small for the predictors: running FFN on CPU only (" +
                        stopped("predictor of layer " + std::to_string(il), costs.predictor_bytes[il]) + ")";
    }
    for (size_t il = 0; ok && il < n_layer; ++il) {
        if (place(costs.ffn_norm_bytes[il])) {
            p.n_ffn_norm_layers = int32_t(il + 1);
            continue;
        }
        ok = false;
        p.explanation = "budget too small for the FFN norms: running FFN on CPU only (" +
                        stopped("ffn_norm of layer " + std::to_string(il), costs.ffn_norm_bytes[il]) + ")";
    }
    if (ok) {
        if (place(costs.output_bytes)) {
            p.output_on_device = true;
        } else {
            ok = false;
            p.explanation = "budget too small for the output layer: running FFN on CPU only (" +
                            stopped("the output group", costs.output_bytes) + ")";
        }
    }
    p.dense_complete = ok;
    p.n_gpu_layers = ok ? int32_t(n_layer) + 1 : p.n_attn_layers;

    if (!ok) {
        // Nothing placed at all: the margin is not needed either.
        if (p.dense_bytes == 0) p.margin_bytes = 0;
        p.bytes_used = p.margin_bytes + p.dense_bytes;
        return p;
    }

    // KV cache: K and V together. PowerInfer places V alone when K does not fit; Ember's
    // device attends only with both halves, so a lone V would hold memory for nothing.
    if (const uint64_t kv = costs.kv_v_bytes + costs.kv_k_bytes; kv <= left) {
        left -= kv;
        p.kv_bytes = kv;
        p.kv_v_on_device = p.kv_k_on_device = true;
        p.n_kv_layers = int32_t(n_layer);
        p.n_gpu_layers += 2;
    } else {
        p.explanation = "KV cache stays on CPU (" + stopped("the KV cache", kv) + ")";
    }

    // FFN neurons with the rest, charged at the dearest layer's neuron so any solution fits.
    p.ffn_budget_bytes = left;
    const uint64_t per = n_layer ? *std::max_element(costs.neuron_bytes.begin(), costs.neuron_bytes.end()) : 0;
    int64_t placeable = 0;  // what the solver can take: every bucket, partial ones counting whole
    int64_t total_neurons = 0;
    for (int64_t n_ff : costs.n_ff) {
        placeable += (n_ff + costs.bucket - 1) / costs.bucket * costs.bucket;
        total_neurons += n_ff;
    }
    uint64_t cap = per == 0 ? uint64_t(placeable) : left / per;
    cap = std::min<uint64_t>(cap, uint64_t(placeable));
    p.ffn_capacity_neurons = int64_t(cap) / costs.bucket * costs.bucket;
    p.ffn_bytes = uint64_t(std::min(p.ffn_capacity_neurons, total_neurons)) * per;
    p.bytes_used = p.margin_bytes + p.dense_bytes + p.kv_bytes + p.ffn_bytes;
    return p;
}

uint64_t ffn_hot_bytes(const PlacementCosts& costs, const std::vector<int64_t>& counts) {
    if (counts.size() != costs.neuron_bytes.size())
        fail("ffn_hot_bytes: " + std::to_string(counts.size()) + " hot counts for " +
             std::to_string(costs.neuron_bytes.size()) + " layers of neuron_bytes");
    uint64_t total = 0;
    for (size_t il = 0; il < counts.size(); ++il) {
        if (counts[il] < 0) fail("ffn_hot_bytes: layer " + std::to_string(il) + " hot count " + std::to_string(counts[il]));
        total = sat_add(total, uint64_t(counts[il]) * costs.neuron_bytes[il]);
    }
    return total;
}

uint64_t budget_from_free_memory(uint64_t free_bytes) {
    constexpr uint64_t kReserve = uint64_t(256) << 20;
    return free_bytes > kReserve ? free_bytes - kReserve : 0;
}

int64_t powerinfer_capacity(uint64_t ffn_budget_bytes, int64_t n_ff, uint32_t ffn_up_type, bool has_gate) {
    const gguf::GgmlTypeInfo* info = gguf::ggml_type_info(ffn_up_type);
    if (!info) fail("powerinfer_capacity: unknown GGML type id " + std::to_string(ffn_up_type));
    if (n_ff <= 0) fail("powerinfer_capacity: n_ff = " + std::to_string(n_ff));
    // Integer arithmetic in the reference's order: (ne[1] * type_size) / block_size.
    const int64_t bytes_n = n_ff * int64_t(info->block_bytes) / int64_t(info->block);
    const int64_t per = int64_t(double(bytes_n) * (has_gate ? 4.5 : 2.0));
    if (per <= 0) return 0;
    return int64_t(ffn_budget_bytes / uint64_t(per)) * 4;
}

// ---- Re-planning ----------------------------------------------------------------------------

int64_t PlacementDiff::n_to_device() const {
    int64_t n = 0;
    for (const auto& l : layers) n += int64_t(l.to_device.size());
    return n;
}

int64_t PlacementDiff::n_to_host() const {
    int64_t n = 0;
    for (const auto& l : layers) n += int64_t(l.to_host.size());
    return n;
}

PlacementDiff diff_placement(const std::vector<std::vector<int32_t>>& before,
                             const std::vector<std::vector<int32_t>>& after) {
    if (before.size() != after.size())
        fail("diff_placement: " + std::to_string(before.size()) + " layers before, " + std::to_string(after.size()) +
             " after");
    auto check_sorted = [](const std::vector<int32_t>& ids, size_t il, const char* which) {
        for (size_t r = 0; r < ids.size(); ++r)
            if (ids[r] < 0 || (r > 0 && ids[r] <= ids[r - 1]))
                fail(std::string("diff_placement: ") + which + " layer " + std::to_string(il) + " entry " +
                     std::to_string(r) + " = " + std::to_string(ids[r]) +
                     ": hot neuron ids must be non-negative, ascending and unique");
    };
    PlacementDiff d;
    d.layers.resize(before.size());
    for (size_t il = 0; il < before.size(); ++il) {
        check_sorted(before[il], il, "before");
        check_sorted(after[il], il, "after");
        std::set_difference(after[il].begin(), after[il].end(), before[il].begin(), before[il].end(),
                            std::back_inserter(d.layers[il].to_device));
        std::set_difference(before[il].begin(), before[il].end(), after[il].begin(), after[il].end(),
                            std::back_inserter(d.layers[il].to_host));
    }
    return d;
}

}  // namespace ember::sparse

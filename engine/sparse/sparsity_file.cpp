#include "sparse/sparsity_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/error.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "sparse/side_file.h"

namespace ember::sparse {
namespace {

constexpr uint32_t kF32 = 0;
constexpr const char* kPrefix = "ember.sparsity.";

std::string tensor_name(int32_t il, SparsitySite site, const char* what) {
    return "blk." + std::to_string(il) + "." + sparsity_site_name(site) + "." + what;
}

std::vector<uint8_t> f32_bytes(const float* v, size_t n) {
    std::vector<uint8_t> b(n * sizeof(float));
    std::memcpy(b.data(), v, b.size());
    return b;
}

// A tensor's F32 values, checked for shape.
std::vector<float> read_f32(const gguf::File& f, const std::string& name, std::vector<int64_t> ne) {
    const gguf::TensorInfo* t = f.find_tensor(name);
    if (!t) fail(f.path() + ": missing tensor '" + name + "'");
    if (t->type != kF32 || t->ne != ne) {
        std::string want;
        for (int64_t n : ne) want += (want.empty() ? "" : ", ") + std::to_string(n);
        fail(f.path() + ": tensor '" + name + "' must be F32 of shape [" + want + "]");
    }
    std::vector<float> v(size_t(t->nelements()));
    std::memcpy(v.data(), t->data, v.size() * sizeof(float));
    for (float x : v)
        if (!std::isfinite(x) || x < 0.0f) fail(f.path() + ": tensor '" + name + "' holds a value that is negative or not finite");
    return v;
}

uint64_t required_uint(const gguf::File& f, const std::string& key) {
    const auto v = f.get_uint(key);
    if (!v) fail(f.path() + ": missing key '" + key + "' (not a sparsity calibration written by ember-calibrate?)");
    return *v;
}

}  // namespace

const char* sparsity_site_name(SparsitySite site) {
    switch (site) {
        case SparsitySite::AttnIn: return "attn_in";
        case SparsitySite::AttnOut: return "attn_out";
        case SparsitySite::FfnIn: return "ffn_in";
        case SparsitySite::FfnAct: return "ffn_act";
    }
    return "?";
}

std::vector<float> default_sparsity_levels() {
    std::vector<float> levels;
    for (int i = 1; i <= 19; ++i) levels.push_back(float(i) * 0.05f);
    return levels;
}

float threshold_at(const SparsityCalibration& c, int32_t il, SparsitySite site, float s) {
    const std::vector<float>& t = c.layers[size_t(il)].thresholds[size_t(site)];
    const std::vector<float>& lv = c.levels;
    if (s <= 0.0f) return 0.0f;
    if (s <= lv.front()) return t.front() * s / lv.front();
    const size_t hi = size_t(std::lower_bound(lv.begin(), lv.end(), s) - lv.begin());
    if (hi >= lv.size()) return t.back();
    const float f = (s - lv[hi - 1]) / (lv[hi] - lv[hi - 1]);
    return t[hi - 1] + f * (t[hi] - t[hi - 1]);
}

const std::vector<float>& firing_at(const SparsityCalibration& c, int32_t il, float s) {
    size_t best = 0;
    for (size_t i = 1; i < c.levels.size(); ++i)
        if (std::fabs(c.levels[i] - s) < std::fabs(c.levels[best] - s)) best = i;
    return c.layers[size_t(il)].firing[best];
}

const char* sparsity_allocation_name(SparsityAllocation a) {
    switch (a) {
        case SparsityAllocation::Uniform: return "uniform";
        case SparsityAllocation::Greedy: return "greedy";
        case SparsityAllocation::Measured: return "measured";
    }
    return "?";
}

std::optional<SparsityAllocation> parse_sparsity_allocation(const std::string& name) {
    for (SparsityAllocation a : {SparsityAllocation::Uniform, SparsityAllocation::Greedy, SparsityAllocation::Measured})
        if (name == sparsity_allocation_name(a)) return a;
    return std::nullopt;
}

float layer_cost_at(const SparsityCalibration& c, int32_t il, float s) {
    const std::vector<float>& lv = c.cost_levels;
    const std::vector<float>& cost = c.layers[size_t(il)].cost;
    if (s <= 0.0f) return 0.0f;
    if (s <= lv.front()) return cost.front() * s / lv.front();
    const size_t hi = size_t(std::lower_bound(lv.begin(), lv.end(), s) - lv.begin());
    // Past the last level measured, the last step's slope continues.
    const size_t h = std::min(hi, lv.size() - 1), l = h == 0 ? 0 : h - 1;
    const float x0 = l == h ? 0.0f : lv[l], y0 = l == h ? 0.0f : cost[l];
    return y0 + (s - x0) * (cost[h] - y0) / (lv[h] - x0);
}

std::string default_sparsity_path(const std::string& model_path) { return side_file_path(model_path, ".sparsity.gguf"); }

float recommended_level(const SparsityCalibration& c, float max_increase) {
    float best = 0.0f;
    const SparsityCalibration::Quality& q = c.quality;
    for (size_t i = 0; i < q.levels.size(); ++i)
        if (q.ppl[i] <= q.ppl_dense * (1.0f + max_increase) && (q.speed.empty() || q.speed[i] > 1.0f))
            best = std::max(best, q.levels[i]);
    return best;
}

void write_sparsity_file(const std::string& path, const SparsityCalibration& c) {
    gguf::Writer w;
    w.set("general.architecture", gguf::Value::string("ember-sparsity"));
    w.set(std::string(kPrefix) + "model_bytes", gguf::Value::u64(c.model_bytes));
    w.set(std::string(kPrefix) + "n_tokens", gguf::Value::u64(c.n_tokens));
    w.set(std::string(kPrefix) + "activation", gguf::Value::string(c.activation));
    w.set(std::string(kPrefix) + "allocation", gguf::Value::string(sparsity_allocation_name(c.allocation)));
    w.set(std::string(kPrefix) + "layer_count", gguf::Value::u32(uint32_t(c.layers.size())));
    gguf::Array levels;
    levels.elem = gguf::ValueType::F32;
    levels.floats.assign(c.levels.begin(), c.levels.end());
    w.set(std::string(kPrefix) + "levels", gguf::Value::array(levels));
    if (!c.cost_levels.empty()) {
        gguf::Array cost_levels;
        cost_levels.elem = gguf::ValueType::F32;
        cost_levels.floats.assign(c.cost_levels.begin(), c.cost_levels.end());
        w.set(std::string(kPrefix) + "cost_levels", gguf::Value::array(cost_levels));
    }
    if (!c.quality.levels.empty()) {
        const auto floats = [](const std::vector<float>& v) {
            gguf::Array a;
            a.elem = gguf::ValueType::F32;
            a.floats.assign(v.begin(), v.end());
            return gguf::Value::array(a);
        };
        w.set(std::string(kPrefix) + "quality.n_scored", gguf::Value::u64(c.quality.n_scored));
        w.set(std::string(kPrefix) + "quality.ppl_dense", gguf::Value::f32(c.quality.ppl_dense));
        w.set(std::string(kPrefix) + "quality.levels", floats(c.quality.levels));
        w.set(std::string(kPrefix) + "quality.ppl", floats(c.quality.ppl));
        w.set(std::string(kPrefix) + "quality.same_top", floats(c.quality.same_top));
        if (!c.quality.speed.empty()) w.set(std::string(kPrefix) + "quality.speed", floats(c.quality.speed));
    }
    w.set(std::string(kPrefix) + "histogram.log2_min", gguf::Value::i32(MagnitudeHistogram::kLog2Min));
    w.set(std::string(kPrefix) + "histogram.bins_per_octave", gguf::Value::u32(MagnitudeHistogram::kBinsPerOctave));
    const int64_t n_levels = int64_t(c.levels.size());
    for (int32_t il = 0; il < int32_t(c.layers.size()); ++il) {
        const SparsityCalibration::Layer& L = c.layers[size_t(il)];
        for (int s = 0; s < kSparsitySites; ++s) {
            const auto site = SparsitySite(s);
            const std::vector<double>& h = L.histograms[size_t(s)].counts;
            const std::vector<float> hf(h.begin(), h.end());
            w.add_tensor(tensor_name(il, site, "histogram"), {int64_t(hf.size())}, kF32, f32_bytes(hf.data(), hf.size()));
            const std::vector<float>& t = L.thresholds[size_t(s)];
            w.add_tensor(tensor_name(il, site, "threshold"), {n_levels}, kF32, f32_bytes(t.data(), t.size()));
        }
        std::vector<float> firing;
        for (const std::vector<float>& f : L.firing) firing.insert(firing.end(), f.begin(), f.end());
        const int64_t n_ff = L.firing.empty() ? 0 : int64_t(L.firing.front().size());
        w.add_tensor(tensor_name(il, SparsitySite::FfnAct, "firing"), {n_ff, n_levels}, kF32,
                     f32_bytes(firing.data(), firing.size()));
        if (!c.cost_levels.empty())
            w.add_tensor(tensor_name(il, SparsitySite::FfnAct, "cost"), {int64_t(L.cost.size())}, kF32,
                         f32_bytes(L.cost.data(), L.cost.size()));
    }
    w.write(path);
}

SparsityCalibration read_sparsity_file(const std::string& path, int32_t n_layer, int32_t n_ff, uint64_t model_bytes) {
    const auto f = gguf::File::open(path);
    SparsityCalibration c;
    const std::string p = kPrefix;
    c.model_bytes = required_uint(*f, p + "model_bytes");
    if (c.model_bytes != model_bytes)
        fail(path + ": calibrated for a model file of " + std::to_string(c.model_bytes) + " bytes, this one has " +
             std::to_string(model_bytes) + ": run ember-calibrate on this model");
    c.n_tokens = required_uint(*f, p + "n_tokens");
    c.activation = f->get_string(p + "activation").value_or("");
    const std::string allocation = f->get_string(p + "allocation").value_or("uniform");
    const std::optional<SparsityAllocation> parsed = parse_sparsity_allocation(allocation);
    if (!parsed) fail(path + ": " + p + "allocation is '" + allocation + "', not uniform, greedy or measured");
    c.allocation = *parsed;
    if (required_uint(*f, p + "layer_count") != uint64_t(n_layer))
        fail(path + ": " + p + "layer_count is " + std::to_string(required_uint(*f, p + "layer_count")) +
             ", the model has " + std::to_string(n_layer) + " layers");
    const gguf::Array* levels = f->get_array(p + "levels");
    if (!levels || levels->floats.empty() || levels->floats.size() > 1000)
        fail(path + ": " + p + "levels must be an array of 1 to 1000 floats");
    for (double v : levels->floats) {
        if (!(v > 0.0 && v < 1.0) || (!c.levels.empty() && float(v) <= c.levels.back()))
            fail(path + ": " + p + "levels must ascend strictly within (0, 1)");
        c.levels.push_back(float(v));
    }
    if (const auto n = f->get_uint(p + "quality.n_scored")) {
        SparsityCalibration::Quality& q = c.quality;
        q.n_scored = *n;
        q.ppl_dense = float(f->get_float(p + "quality.ppl_dense").value_or(0.0));
        const auto floats = [&](const char* key) {
            const gguf::Array* a = f->get_array(p + key);
            if (!a) fail(path + ": missing key '" + p + key + "'");
            return std::vector<float>(a->floats.begin(), a->floats.end());
        };
        q.levels = floats("quality.levels");
        q.ppl = floats("quality.ppl");
        q.same_top = floats("quality.same_top");
        if (q.ppl.size() != q.levels.size() || q.same_top.size() != q.levels.size() || !(q.ppl_dense > 0.0f))
            fail(path + ": " + p + "quality.* must hold one perplexity and one share per level, and a dense perplexity");
        // The app offers these levels and suggests one of them: each must be a level a load can run.
        for (size_t i = 0; i < q.levels.size(); ++i)
            if (!(q.levels[i] > 0.0f && q.levels[i] <= c.levels.back()) || (i > 0 && !(q.levels[i] > q.levels[i - 1])))
                fail(path + ": " + p + "quality.levels must ascend strictly within the ladder, (0, " +
                     std::to_string(c.levels.back()) + "]");
        if (!(std::isfinite(q.ppl_dense)) ||
            std::any_of(q.ppl.begin(), q.ppl.end(), [](float v) { return !(v > 0.0f && std::isfinite(v)); }))
            fail(path + ": " + p + "quality.ppl must hold finite positive perplexities");
        if (std::any_of(q.same_top.begin(), q.same_top.end(), [](float v) { return !(v >= 0.0f && v <= 1.0f); }))
            fail(path + ": " + p + "quality.same_top must hold shares from 0 to 1");
        if (f->get_array(p + "quality.speed")) {
            q.speed = floats("quality.speed");
            if (q.speed.size() != q.levels.size() ||
                std::any_of(q.speed.begin(), q.speed.end(), [](float v) { return !(v > 0.0f && std::isfinite(v)); }))
                fail(path + ": " + p + "quality.speed must hold one positive speed per level");
        }
    }
    if (const gguf::Array* cost_levels = f->get_array(p + "cost_levels")) {
        for (double v : cost_levels->floats) {
            if (!(v > 0.0 && v < 1.0) || (!c.cost_levels.empty() && float(v) <= c.cost_levels.back()))
                fail(path + ": " + p + "cost_levels must ascend strictly within (0, 1)");
            c.cost_levels.push_back(float(v));
        }
        if (c.cost_levels.empty() || c.cost_levels.size() > 1000) fail(path + ": " + p + "cost_levels must hold 1 to 1000 levels");
    }
    if (c.allocation == SparsityAllocation::Measured && c.cost_levels.empty())
        fail(path + ": " + p + "allocation is 'measured', and the file holds no layer costs (" + p + "cost_levels)");
    const int64_t n_levels = int64_t(c.levels.size());
    c.layers.resize(size_t(n_layer));
    for (int32_t il = 0; il < n_layer; ++il) {
        SparsityCalibration::Layer& L = c.layers[size_t(il)];
        for (int s = 0; s < kSparsitySites; ++s) {
            const auto site = SparsitySite(s);
            const std::vector<float> h = read_f32(*f, tensor_name(il, site, "histogram"), {MagnitudeHistogram::kBins});
            L.histograms[size_t(s)].counts.assign(h.begin(), h.end());
            L.thresholds[size_t(s)] = read_f32(*f, tensor_name(il, site, "threshold"), {n_levels});
            if (!std::is_sorted(L.thresholds[size_t(s)].begin(), L.thresholds[size_t(s)].end()))
                fail(path + ": tensor '" + tensor_name(il, site, "threshold") + "' must not decrease from level to level");
        }
        const std::string name = tensor_name(il, SparsitySite::FfnAct, "firing");
        const std::vector<float> firing = read_f32(*f, name, {n_ff, n_levels});
        if (std::any_of(firing.begin(), firing.end(), [](float v) { return v > 1.0f; }))
            fail(path + ": tensor '" + name + "' holds a frequency above 1");
        for (int64_t lv = 0; lv < n_levels; ++lv)
            L.firing.emplace_back(firing.begin() + lv * n_ff, firing.begin() + (lv + 1) * n_ff);
        if (!c.cost_levels.empty()) L.cost = read_f32(*f, tensor_name(il, SparsitySite::FfnAct, "cost"), {int64_t(c.cost_levels.size())});
    }
    return c;
}

}  // namespace ember::sparse

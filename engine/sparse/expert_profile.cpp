#include "sparse/expert_profile.h"

#include <cmath>
#include <cstring>

#include "common/error.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"
#include "sparse/side_file.h"

namespace ember::sparse {
namespace {

constexpr uint32_t kF32 = 0;
constexpr const char* kPrefix = "ember.experts.";

std::string tensor_name(int32_t il) { return "blk." + std::to_string(il) + ".expert_share"; }
std::string fire_tensor_name(int32_t il) { return "blk." + std::to_string(il) + ".expert_neuron_fire"; }

void add_f32_tensor(gguf::Writer& w, const std::string& name, std::vector<int64_t> ne, const std::vector<float>& v) {
    std::vector<uint8_t> bytes(v.size() * sizeof(float));
    std::memcpy(bytes.data(), v.data(), bytes.size());
    w.add_tensor(name, std::move(ne), kF32, std::move(bytes));
}

// The F32 tensor `name` of shape ne, each value a share in [0, 1].
std::vector<float> read_shares(const gguf::File& f, const std::string& name, const std::vector<int64_t>& ne,
                               const std::string& shape, const std::string& what) {
    const gguf::TensorInfo* t = f.find_tensor(name);
    if (!t) fail(f.path() + ": missing tensor '" + name + "'");
    if (t->type != kF32 || t->ne != ne) fail(f.path() + ": tensor '" + name + "' must be F32 of shape " + shape + ", " + what);
    std::vector<float> s(size_t(t->nelements()));
    std::memcpy(s.data(), t->data, s.size() * sizeof(float));
    for (float v : s)
        if (!std::isfinite(v) || v < 0.0f || v > 1.0f) fail(f.path() + ": tensor '" + name + "' holds a share outside [0, 1]");
    return s;
}

uint64_t required_uint(const gguf::File& f, const std::string& key) {
    const auto v = f.get_uint(key);
    if (!v) fail(f.path() + ": missing key '" + key + "' (not an expert profile written by ember-calibrate?)");
    return *v;
}

}  // namespace

std::string default_expert_profile_path(const std::string& model_path) { return side_file_path(model_path, ".experts.gguf"); }

void write_expert_profile(const std::string& path, const ExpertProfile& p) {
    gguf::Writer w;
    w.set("general.architecture", gguf::Value::string("ember-experts"));
    w.set(std::string(kPrefix) + "model_bytes", gguf::Value::u64(p.model_bytes));
    w.set(std::string(kPrefix) + "n_tokens", gguf::Value::u64(p.n_tokens));
    w.set(std::string(kPrefix) + "layer_count", gguf::Value::u32(uint32_t(p.share.size())));
    if (!p.fire.empty() && p.fire.size() != p.share.size())
        fail(path + ": neuron firing rates for " + std::to_string(p.fire.size()) + " of " + std::to_string(p.share.size()) +
             " layers; a profile has them for every layer or for none");
    for (int32_t il = 0; il < int32_t(p.share.size()); ++il) {
        const int64_t n_expert = int64_t(p.share[size_t(il)].size());
        add_f32_tensor(w, tensor_name(il), {n_expert}, p.share[size_t(il)]);
        if (size_t(il) < p.fire.size())
            add_f32_tensor(w, fire_tensor_name(il), {int64_t(p.fire[size_t(il)].size()) / n_expert, n_expert}, p.fire[size_t(il)]);
    }
    w.write(path);
}

ExpertProfile read_expert_profile(const std::string& path, int32_t n_layer, int32_t n_expert, int32_t n_expert_used,
                                  int32_t n_ff, uint64_t model_bytes) {
    const auto f = gguf::File::open(path);
    const std::string p = kPrefix;
    ExpertProfile profile;
    profile.model_bytes = required_uint(*f, p + "model_bytes");
    if (profile.model_bytes != model_bytes)
        fail(path + ": profiled for a model file of " + std::to_string(profile.model_bytes) + " bytes, this one has " +
             std::to_string(model_bytes) + ": run ember-calibrate on this model");
    profile.n_tokens = required_uint(*f, p + "n_tokens");
    if (profile.n_tokens == 0) fail(path + ": " + p + "n_tokens is 0");
    if (const uint64_t n = required_uint(*f, p + "layer_count"); n != uint64_t(n_layer))
        fail(path + ": " + p + "layer_count is " + std::to_string(n) + ", the model has " + std::to_string(n_layer) + " layers");
    const bool has_fire = f->find_tensor(fire_tensor_name(0)) != nullptr;
    for (int32_t il = 0; il < n_layer; ++il) {
        const std::string name = tensor_name(il);
        const std::vector<float>& s = profile.share.emplace_back(
            read_shares(*f, name, {n_expert}, "[" + std::to_string(n_expert) + "]", "one share per expert"));
        double sum = 0.0;
        for (float v : s) sum += v;
        // Every token goes to n_expert_used experts; rounding of float sums aside.
        if (std::fabs(sum - n_expert_used) > 1e-3 * n_expert_used)
            fail(path + ": tensor '" + name + "' sums to " + std::to_string(sum) + ", not the " +
                 std::to_string(n_expert_used) + " experts each token uses");
        // A profile has neuron firing rates for every layer or for none.
        if (has_fire)
            profile.fire.push_back(read_shares(*f, fire_tensor_name(il), {n_ff, n_expert},
                                               "[" + std::to_string(n_ff) + ", " + std::to_string(n_expert) + "]",
                                               "one share per neuron of each expert"));
        else if (f->find_tensor(fire_tensor_name(il)))
            fail(path + ": tensor '" + fire_tensor_name(il) + "' without '" + fire_tensor_name(0) +
                 "': a profile has neuron firing rates for every layer or for none");
    }
    return profile;
}

}  // namespace ember::sparse

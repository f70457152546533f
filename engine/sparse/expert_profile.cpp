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
    for (int32_t il = 0; il < int32_t(p.share.size()); ++il) {
        const std::vector<float>& s = p.share[size_t(il)];
        std::vector<uint8_t> bytes(s.size() * sizeof(float));
        std::memcpy(bytes.data(), s.data(), bytes.size());
        w.add_tensor(tensor_name(il), {int64_t(s.size())}, kF32, std::move(bytes));
    }
    w.write(path);
}

ExpertProfile read_expert_profile(const std::string& path, int32_t n_layer, int32_t n_expert, int32_t n_expert_used,
                                  uint64_t model_bytes) {
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
    for (int32_t il = 0; il < n_layer; ++il) {
        const std::string name = tensor_name(il);
        const gguf::TensorInfo* t = f->find_tensor(name);
        if (!t) fail(path + ": missing tensor '" + name + "'");
        if (t->type != kF32 || t->ne != std::vector<int64_t>{n_expert})
            fail(path + ": tensor '" + name + "' must be F32 of shape [" + std::to_string(n_expert) + "], one share per expert");
        std::vector<float>& s = profile.share.emplace_back(size_t(n_expert));
        std::memcpy(s.data(), t->data, s.size() * sizeof(float));
        double sum = 0.0;
        for (float v : s) {
            if (!std::isfinite(v) || v < 0.0f || v > 1.0f)
                fail(path + ": tensor '" + name + "' holds a share outside [0, 1]");
            sum += v;
        }
        // Every token goes to n_expert_used experts; rounding of float sums aside.
        if (std::fabs(sum - n_expert_used) > 1e-3 * n_expert_used)
            fail(path + ": tensor '" + name + "' sums to " + std::to_string(sum) + ", not the " +
                 std::to_string(n_expert_used) + " experts each token uses");
    }
    return profile;
}

}  // namespace ember::sparse

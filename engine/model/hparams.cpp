#include "model/hparams.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "common/error.h"
#include "common/utf8_path.h"

namespace ember::model {
namespace {

int32_t required_count(const gguf::File& f, const std::string& key, int64_t max) {
    auto v = f.get_uint(key);
    if (!v) fail(f.path() + ": missing metadata key '" + key + "'");
    if (*v == 0 || int64_t(*v) > max)
        fail(f.path() + ": metadata key '" + key + "' = " + std::to_string(*v) + " is out of range (1.." +
             std::to_string(max) + ")");
    return int32_t(*v);
}

}  // namespace

uint32_t optional_uint(const gguf::File& f, const std::string& key, uint32_t fallback) {
    if (!f.find(key)) return fallback;
    const auto v = f.get_uint(key);
    if (!v || *v > (1u << 24)) fail(f.path() + ": metadata key '" + key + "' must be an unsigned integer up to 2^24");
    return uint32_t(*v);
}

HParams read_hparams(const gguf::File& f, const std::string& arch, const std::string& eps_key) {
    HParams hp;
    hp.arch = arch;
    const std::string p = arch + ".";
    hp.n_ctx_train = required_count(f, p + "context_length", 1 << 24);
    hp.n_embd = required_count(f, p + "embedding_length", 1 << 16);
    hp.n_layer = required_count(f, p + "block_count", 1024);
    hp.n_ff = required_count(f, p + "feed_forward_length", 1 << 20);
    hp.n_head = required_count(f, p + "attention.head_count", 1 << 12);
    hp.n_head_kv = f.find(p + "attention.head_count_kv") ? required_count(f, p + "attention.head_count_kv", hp.n_head)
                                                          : hp.n_head;
    if (f.find(p + "attention.key_length")) {
        hp.n_embd_head = required_count(f, p + "attention.key_length", 1 << 12);
        const int32_t v = f.find(p + "attention.value_length") ? required_count(f, p + "attention.value_length", 1 << 12)
                                                               : hp.n_embd_head;
        if (v != hp.n_embd_head)
            fail(f.path() + ": " + p + "attention.value_length " + std::to_string(v) +
                 " differs from attention.key_length " + std::to_string(hp.n_embd_head) + " (not supported)");
    } else {
        if (hp.n_embd % hp.n_head != 0)
            fail(f.path() + ": " + p + "embedding_length " + std::to_string(hp.n_embd) +
                 " is not divisible by attention.head_count " + std::to_string(hp.n_head));
        hp.n_embd_head = hp.n_embd / hp.n_head;
    }
    if (hp.n_head % hp.n_head_kv != 0)
        fail(f.path() + ": " + p + "attention.head_count " + std::to_string(hp.n_head) +
             " is not divisible by attention.head_count_kv " + std::to_string(hp.n_head_kv));
    if (hp.head_dim() % 2 != 0)
        fail(f.path() + ": head dimension " + std::to_string(hp.head_dim()) + " must be even for RoPE");
    hp.n_rot = f.find(p + "rope.dimension_count") ? required_count(f, p + "rope.dimension_count", hp.head_dim())
                                                  : hp.head_dim();
    if (hp.n_rot != hp.head_dim())
        fail(f.path() + ": " + p + "rope.dimension_count " + std::to_string(hp.n_rot) +
             " must equal the head dimension " + std::to_string(hp.head_dim()));

    auto eps = f.get_float(p + eps_key);
    if (!eps) fail(f.path() + ": missing metadata key '" + p + eps_key + "'");
    if (!(*eps > 0.0 && *eps < 1.0))
        fail(f.path() + ": metadata key '" + p + eps_key + "' = " + std::to_string(*eps) + " is out of range");
    hp.norm_eps = float(*eps);
    if (auto base = f.get_float(p + "rope.freq_base")) {
        if (!(*base > 0.0) || !std::isfinite(*base))
            fail(f.path() + ": metadata key '" + p + "rope.freq_base' = " + std::to_string(*base) + " is invalid");
        hp.rope_freq_base = float(*base);
    }
    auto factor = f.get_float(p + "rope.scaling.factor");
    if (!factor) factor = f.get_float(p + "rope.scale_linear");
    if (factor && *factor != 0.0) {
        if (!(*factor > 0.0) || !std::isfinite(*factor))
            fail(f.path() + ": metadata key '" + p + "rope.scaling.factor' = " + std::to_string(*factor) + " is invalid");
        hp.rope_freq_scale = float(1.0 / *factor);
    }

    const gguf::Array* tokens = f.get_array("tokenizer.ggml.tokens");
    if (!tokens) fail(f.path() + ": missing metadata key 'tokenizer.ggml.tokens'");
    hp.n_vocab = int32_t(tokens->size());
    if (hp.n_vocab == 0) fail(f.path() + ": metadata key 'tokenizer.ggml.tokens' is empty");
    return hp;
}

void resolve_gated_activation(const gguf::File& f, FfnActivation requested, HParams& hp) {
    const auto set = [&](FfnActivation act, std::string source) {
        hp.ffn_gate = act == FfnActivation::Relu ? FfnGate::ReluPar : FfnGate::SiluPar;
        hp.ffn_gate_source = std::move(source);
    };
    if (requested != FfnActivation::Auto) return set(requested, "set by the user");
    if (auto s = f.get_string("ember.ffn_activation")) {
        if (*s == "relu") return set(FfnActivation::Relu, "the file's ember.ffn_activation key");
        if (*s == "silu") return set(FfnActivation::Silu, "the file's ember.ffn_activation key");
        fail(f.path() + ": metadata key 'ember.ffn_activation' = '" + *s + "' is not 'relu' or 'silu'");
    }
    // PowerInfer publishes activation statistics only for ReLU models.
    const std::filesystem::path stats = utf8_path(f.path()).parent_path() / "activation" / "activation_0.pt";
    std::error_code ec;
    if (std::filesystem::is_regular_file(stats, ec))
        return set(FfnActivation::Relu, "PowerInfer activation statistics next to the file (activation/)");
    std::string names = utf8_string(utf8_path(f.path()).filename()) + " " +
                        f.get_string("general.name").value_or("") + " " + f.get_string("general.basename").value_or("");
    std::transform(names.begin(), names.end(), names.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (names.find("relu") != std::string::npos || names.find("prosparse") != std::string::npos)
        return set(FfnActivation::Relu, "the model's name");
    set(FfnActivation::Silu, "assumed: the file has no activation key (use --ffn-act relu for a ReLU model)");
}

float resolve_sparse_threshold(const gguf::File& f, std::optional<float> requested) {
    if (requested) return *requested;
    if (const char* env = std::getenv("LLAMA_SPARSE_PRED_THRESHOLD")) {
        char* end = nullptr;
        const float v = std::strtof(env, &end);
        if (end == env || *end != '\0' || !std::isfinite(v))
            fail(std::string("LLAMA_SPARSE_PRED_THRESHOLD='") + env + "' is not a number");
        return v;
    }
    const auto v = f.get_float("powerinfer.sparse_threshold");
    if (v && !std::isfinite(*v))
        fail(f.path() + ": metadata key 'powerinfer.sparse_threshold' = " + std::to_string(*v) + " is not finite");
    return v ? float(*v) : 0.0f;
}

const char* ffn_gate_name(FfnGate gate) {
    switch (gate) {
        case FfnGate::SiluPar: return "silu";
        case FfnGate::ReluPar: return "relu";
        case FfnGate::ReluSym: return "relu-sym";
        case FfnGate::Relu: return "relu";
        case FfnGate::GeluPar: return "gelu";
    }
    return "?";
}

}  // namespace ember::model

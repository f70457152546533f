#pragma once
// Hyper-parameters of a decoder-only transformer, read from `{arch}.*` GGUF keys.

#include <cstdint>
#include <optional>
#include <string>

#include "ember/model.h"
#include "gguf/gguf_reader.h"

namespace ember::model {

struct HParams : ModelShape {
    std::string arch;
    int32_t n_rot = 0;
    float norm_eps = 1e-5f;
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;
    FfnActivation ffn_act = FfnActivation::Silu;
    // Sparse (PowerInfer) files: the largest predictor rank, and the score threshold at or
    // above which a neuron counts as active. max_predictor_rank == 0: a dense model.
    int32_t max_predictor_rank = 0;
    float sparse_threshold = 0.0f;

    int32_t head_dim() const { return n_embd / n_head; }
    int32_t n_embd_gqa() const { return head_dim() * n_head_kv; }
};

// Reads the keys every LLaMA-family architecture shares; n_vocab from the token list.
// Throws EngineError naming the file and the key for a missing or invalid value.
HParams read_llama_family_hparams(const gguf::File& file, const std::string& arch);

// The activation the file asks for (`ember.ffn_activation`), the user's override, else `fallback`.
FfnActivation resolve_ffn_activation(const gguf::File& file, FfnActivation requested, FfnActivation fallback);
const char* ffn_activation_name(FfnActivation act);

// powerinfer.sparse_threshold (default 0), overridden by PowerInfer's environment variable
// LLAMA_SPARSE_PRED_THRESHOLD, overridden by the user's setting.
float resolve_sparse_threshold(const gguf::File& file, std::optional<float> requested);

}  // namespace ember::model

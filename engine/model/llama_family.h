#pragma once
// The LLaMA graph as llama.cpp and PowerInfer write it: RMSNorm, RoPE on adjacent pairs (Q/K
// rows permuted at conversion), grouped-query attention, gated FFN. `llama` and `bamboo` run it
// and differ only in the FFN activation, which the caller resolves into hp; `qwen2` adds Q/K/V
// biases and rotates NeoX pairs (hp.qkv_bias, hp.rope_pairs); `qwen3` normalizes Q and K per
// head instead of the biases (hp.qk_norm), with heads of its own width (hp.n_embd_head); `phi3`
// fuses Q/K/V and gate/up into one tensor each (row ranges) and may switch RoPE factors by context;
// `qwen3moe`, Mixtral's `llama` files and `smallthinker` replace the FFN by a mixture of experts
// (hp.moe()), routed from ffn_norm's output or, SmallThinker's, from the layer's input before
// attention.
// A dense file has ffn_down; a PowerInfer file (magic PWRI, or ffn_down_t in a GGUF-magic file)
// has ffn_down_t and per-layer predictors fc1/fc2 (docs/FORMATS.md §4.2) and runs the
// sparse FFN, whose predictor reads the residual stream before ffn_norm.

#include <memory>

#include "model/architecture.h"

namespace ember::model {

std::unique_ptr<Architecture> load_llama_family(const gguf::File& file, const ModelParams& params, HParams hp);

}  // namespace ember::model

#pragma once
// CPU building blocks of the transformer layers that need no placement: embedding lookup, the
// FFN activations, residual sums. Everything that may run on a device goes through the Executor.

#include <cstdint>

#include "model/hparams.h"
#include "tensor/matmul.h"

namespace ember::model {

// act[i] = the activation of (gate[i], up[i]) for n elements (gate unused for FfnGate::Relu).
void ffn_activation(FfnGate gate_kind, const float* gate, const float* up, float* act, int64_t n);

void add_in_place(float* x, const float* y, int64_t n);

// Dequantizes embedding rows for the given tokens into out [n][n_embd]; ids are checked.
void embed_tokens(const tensor::WeightView& table, const int32_t* tokens, int32_t n, float* out);

}  // namespace ember::model

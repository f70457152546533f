#pragma once
// The predictor-guided sparse FFN shared by every ReLU-family architecture (PowerInfer's
// method, powerinfer-format.md §2.6–2.7, §5.2): per token a low-rank predictor scores every
// neuron, only neurons scoring at or above the threshold are computed, and the output is the
// sum of their rows of the transposed down projection. Deterministic whatever the thread
// count: on the CPU alone the sum runs over fixed chunks of neurons (ascending within a chunk,
// chunk after chunk); with a device, each output element sums the CPU's neurons in ascending
// order and then adds the device's share.

#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "model/blocks.h"
#include "model/sparse_scratch.h"
#include "tensor/matmul.h"

namespace ember::model {

struct SparseFfnWeights {
    tensor::WeightView gate;    // [n_embd] -> [n_ff], row i = neuron i (absent for FfnGate::Relu)
    tensor::WeightView up;      // [n_embd] -> [n_ff]
    tensor::WeightView down_t;  // n_ff rows of [n_embd]: row i = neuron i's output vector
    tensor::WeightView fc1;     // predictor [n_embd] -> [r]
    tensor::WeightView fc2;     // predictor [r] -> [n_ff]
};

// PWRI marks a PowerInfer file; a GGUF-magic file in its layout (ffn_down_t) runs the same way.
bool is_powerinfer_layout(const gguf::File& file);

// out[t] = sparse FFN of token t: predictor input u[t] ([n_embd], the architecture's choice),
// FFN input x[t] ([n_embd], normalized).
// With ss.device set, active neurons resident there (ss.hot[il]) are computed on the device and
// the rest on the CPU; the two output shares are summed.
void sparse_ffn(int32_t il, const SparseFfnWeights& w, FfnGate gate, float threshold, const float* u,
                const float* x, int32_t n_tokens, float* out, Scratch& s, SparseScratch& ss);

}  // namespace ember::model

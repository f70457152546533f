#pragma once
// One expert of a mixture-of-experts FFN over the batch rows routed to it: y = down ·
// act(gate · x, up · x). A ReGLU expert (SmallThinker's) computing one token runs gate first,
// as PowerInfer does without a predictor: every gate row, then the up rows only of the neurons
// whose gate is above 0 (the others' activation is exactly 0), and, when the down weights are
// stored transposed (a row per neuron, PowerInfer's layout), only those neurons' down rows.

#include <cstdint>
#include <vector>

#include "model/hparams.h"
#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace ember::model {

struct ExpertWeights {
    tensor::WeightView gate;  // [n_embd] -> [n_ff]
    tensor::WeightView up;    // [n_embd] -> [n_ff], rows read singly when gate-first
    tensor::WeightView down;  // [n_ff] -> [n_embd]; transposed: n_ff rows of [n_embd]
    bool down_transposed = false;
};

// Buffers of one call, sized for up to n_batch rows by the caller: g and up hold [m][n_ff], act
// [m][n_ff], y [m][n_embd]; active has capacity n_ff.
struct ExpertBuffers {
    float* g;
    float* up;
    float* act;
    std::vector<int32_t>& active;
    tensor::PreparedActivations& prepared;
};

struct ExpertWork {
    int64_t neurons = 0;  // neurons computed (up rows read), summed over the rows
    uint64_t bytes = 0;   // weight bytes read
};

// y ([m][n_embd]) = the expert of x ([m][n_embd]).
ExpertWork run_expert(const ExpertWeights& w, FfnGate gate, const float* x, int32_t m, float* y, tensor::ThreadPool& pool,
                   ExpertBuffers b);

}  // namespace ember::model

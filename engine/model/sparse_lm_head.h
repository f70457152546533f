#pragma once
// PowerInfer's sparse LM head for SmallThinker files that carry `lm_head_profiler.weight`: a
// low-rank predictor, score = W2 · (W1 · x) with W1 [r][n_embd] and W2 [n_vocab][r], picks the
// vocabulary rows whose score is above 0; only those rows of the LM head are computed, and every
// other logit is 0, as in PowerInfer's own runtime. It changes the output, so a session runs it
// only when the model was loaded for it (ModelParams::sparse_lm_head), for one token at a time, on
// the CPU.

#include <cstdint>
#include <vector>

#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace ember::model {

struct LmHeadProfiler {
    tensor::WeightView to_rank;   // W1: [n_embd] -> [r]
    tensor::WeightView to_vocab;  // W2: [r] -> [n_vocab]
};

// Buffers sized once for a model (the per-token path allocates nothing).
struct SparseLmHeadScratch {
    SparseLmHeadScratch(const LmHeadProfiler& p, int64_t n_embd);

    tensor::PreparedActivations x;       // the normalized input, for W1
    tensor::PreparedActivations hidden;  // W1 · x, for W2
    std::vector<float> rank;             // [r] W1 · x
    std::vector<float> score;            // [n_vocab] the profiler's scores
    std::vector<int32_t> rows;           // the rows computed, ascending
};

// logits[v] = head row v · x where the profiler's score for v is above 0, else 0, for one
// normalized row x; head_x prepares x for the head as its dense product would. Returns the
// number of rows computed.
int64_t sparse_lm_head(tensor::ThreadPool& pool, const tensor::WeightView& head, const LmHeadProfiler& p,
                       const float* x, float* logits, SparseLmHeadScratch& s, tensor::PreparedActivations& head_x);

}  // namespace ember::model

#pragma once
// The predictor-guided sparse FFN shared by every ReLU-family architecture (PowerInfer's
// method, docs/FORMATS.md §3.2–§3.4, §4.3): per token a low-rank predictor scores every
// neuron, only neurons scoring at or above the threshold are computed, and the output is the
// sum of their rows of the transposed down projection. Deterministic whatever the thread
// count: on the CPU alone the sum runs over fixed chunks of neurons (ascending within a chunk,
// chunk after chunk); with a device, each output element sums the CPU's neurons in ascending
// order and then adds the device's share.

#include <cstdint>
#include <vector>

#include "gguf/gguf_reader.h"
#include "backend/device_stream.h"
#include "model/hparams.h"
#include "model/sparse_scratch.h"
#include "tensor/matmul.h"
#include "tensor/thread_pool.h"

namespace ember::model {

struct SparseFfnWeights {
    tensor::WeightView gate;    // [n_embd] -> [n_ff], row i = neuron i (absent for FfnGate::Relu)
    tensor::WeightView up;      // [n_embd] -> [n_ff]
    tensor::WeightView down_t;  // n_ff rows of [n_embd]: row i = neuron i's output vector
    tensor::WeightView fc1;     // predictor [n_embd] -> [r]
    tensor::WeightView fc2;     // predictor [r] -> [n_ff]
    // A gate-first FFN that skips small inputs too (ModelParams::sparse_ffn_input): the gate laid
    // out by input, n_embd rows of [n_ff] (row j = input j's weight to every neuron), in place of
    // `gate`, so that only the rows of the inputs kept are read.
    tensor::WeightView gate_t;
    // Without a predictor (fc1 empty) the FFN runs gate first: every gate row, then the up and
    // down rows of the neurons whose |act(gate)| exceeds the session's threshold for the layer
    // (a dense model's calibrated activation sparsity).
    bool gate_first() const { return fc1.n_rows == 0; }
};

// PWRI marks a PowerInfer file; a GGUF-magic file in its layout (ffn_down_t) runs the same way.
bool is_powerinfer_layout(const gguf::File& file);

// A gate-first FFN's scores for one token's FFN input x: every gate product into ss.gate and
// |act(gate)| into ss.score.
void gate_scores(const SparseFfnWeights& w, FfnGate gate, const float* x, tensor::ThreadPool& pool,
                 tensor::PreparedActivations& prepared, SparseScratch& ss);
// |act(g)| of n_ff gate products g into ss.score (a batch's products, one token's row at a time).
void score_gate_products(FfnGate gate, const float* g, int64_t n_ff, SparseScratch& ss);

// The score at or above which `keep` of ss.score's n_ff neurons lie (ties aside), and never 0:
// with input sparsity the gate products shrink, so a layer's share of neurons is kept by count,
// not by a threshold calibrated on exact products; neurons scoring 0 are skipped whatever the count.
float score_of_kept(SparseScratch& ss, int64_t n_ff, int64_t keep);

// One token's predicted active neurons from ss.score (at or above the threshold): those resident
// on the device (hot[i] set; hot may be null) into ss.hot_active, the rest into ss.active, both
// ascending; counted in ss.stats[il]. With w.gate_t, the token kept `inputs_kept` of its inputs.
void select_active(int32_t il, const SparseFfnWeights& w, FfnGate gate, float threshold, const uint8_t* hot,
                   SparseScratch& ss, int64_t inputs_kept = 0);

// y ([n_embd]) = the FFN of one token's input x over the active neurons ss.active, all on the CPU.
void cpu_sparse_ffn(const SparseFfnWeights& w, FfnGate gate, const float* x, float* y, tensor::ThreadPool& pool,
                    SparseScratch& ss);

// The product of a matrix laid out by input (t: row i = input i's weight to every output, as a
// transposed down projection or w.gate_t) with n_tokens inputs a ([n_tokens][t.n_rows], zero
// where skipped; overwritten): y ([n_tokens][t.n_cols]). Summed in fixed chunks of inputs, as
// cpu_sparse_ffn sums its down rows, so each token's y is bit for bit what it is alone. Each row
// is read once for every eight tokens, and not at all where they all skip its input.
void product_by_inputs_batch(const tensor::WeightView& t, float* a, int32_t n_tokens, float* y,
                             tensor::ThreadPool& pool, SparseScratch& ss);

// y ([n_tokens][t.n_cols]) = the product of t, laid out by input as above, with the inputs of x
// ([n_tokens][t.n_rows]) whose magnitude exceeds `threshold` alone, the others skipped, so that
// only the kept inputs' rows are read (TEAL's input sparsity). `kept` (as large as x) receives the
// kept inputs and is then overwritten; ss.inputs_kept[k] counts token k's. One token alone sums
// all of each fixed chunk of inputs' rows on one thread; its y is bit for bit what it is in a batch.
void product_of_large_inputs(const tensor::WeightView& t, const float* x, int32_t n_tokens, float threshold,
                             float* kept, float* y, tensor::ThreadPool& pool, SparseScratch& ss);

// The same with the neurons of ss.hot_active computed by the device, which holds their rows,
// concurrently with the CPU's; the device's share of y is added last.
void split_sparse_ffn(int32_t il, const SparseFfnWeights& w, FfnGate gate, const float* x, float* y,
                      backend::DeviceStream& device, tensor::ThreadPool& pool, SparseScratch& ss);

}  // namespace ember::model

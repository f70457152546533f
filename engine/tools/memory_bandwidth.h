#pragma once
// STREAM-like read benchmarks: the rates at which this machine's threads read memory much
// larger than the caches, the ceilings for token generation (which reads every weight once).

#include <cstddef>
#include <cstdint>

namespace ember::tools {

// Median GB/s (1e9 bytes/s) of `reps` passes over `bytes` bytes read by `n_threads` threads.
double measure_read_bandwidth(size_t bytes, int n_threads, int reps);

// What a sparse model reads for one generated token, per layer: its dense weights (attention,
// predictor, its share of the LM head) streamed, then the rows of the active FFN neurons, which
// lie scattered through the layer's FFN matrices.
struct TokenReads {
    int32_t n_layer = 0;
    uint64_t dense_bytes_per_layer = 0;
    int32_t n_ff = 0;
    int32_t ffn_matrices = 0;  // rows read per active neuron, one in each matrix
    uint64_t row_bytes = 0;
    double active_share = 0;
};

struct TokenReadRates {
    double stream_gbps = 0;  // the dense weights
    double rows_gbps = 0;    // the scattered FFN rows
    double token_gbps = 0;   // both: the rate a perfect engine would read a token's bytes at
};

// The same reads done by plain loads (the next neuron's rows prefetched, as the engine does)
// over a buffer laid out like the model (at most `max_bytes`: fewer layers when it is larger),
// the threads waiting for each other between the phases as the engine's do; medians of `reps`
// passes, each with fresh active sets.
TokenReadRates measure_token_reads(const TokenReads& t, int n_threads, int reps, size_t max_bytes);

}  // namespace ember::tools

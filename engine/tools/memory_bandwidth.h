#pragma once
// A STREAM-like read benchmark: the rate at which this machine's threads can stream a buffer
// much larger than the caches, the ceiling for token generation (which reads every weight once).

#include <cstddef>

namespace ember::tools {

// Median GB/s (1e9 bytes/s) of `reps` passes over `bytes` bytes read by `n_threads` threads.
double measure_read_bandwidth(size_t bytes, int n_threads, int reps);

}  // namespace ember::tools

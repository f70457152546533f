#pragma once
// Reading chosen rows of a weight matrix, scattered through it (the active neurons of a sparse
// FFN or of an expert): dot products with one prepared input, and sums of scaled rows. Q4_0
// rows go four (dots) or eight (sums, Q8_0 rows too) at a time (bit-identical to one at a time), the next group's rows prefetched,
// since the hardware prefetcher restarts at every row.

#include <cstdint>
#include <span>

#include "tensor/matmul.h"

namespace ember::model {

void prefetch_bytes(const uint8_t* p, size_t n);

// out[j] = w's row ids[j] · x, x prepared for w's type.
void dot_rows(const tensor::WeightView& w, std::span<const int32_t> ids, const uint8_t* x, float* out);

// y[0, n) += Σ coef[i] · columns [col0, col0 + n) of w's row i over i in `ids`, in their order
// (Q4_0, Q8_0 and F16 rows eight at a time, bit for bit one at a time).
void accumulate_rows(const tensor::WeightView& w, std::span<const int32_t> ids, const float* coef, int64_t col0, int64_t n,
                     float* y);

// For each of m ≤ kTokensAtOnce tokens t: y[t][0, n) += Σ coef[i·m + t] · columns [col0, col0 + n) of w's row
// i over i in `ids`, in their order, each sum from zero (bit for bit accumulate_rows into a zeroed
// buffer, then added). Q4_0 and Q8_0 rows are read once for all m tokens by a fused kernel; F16
// and F32 rows (the other types a transposed down has) a 256-column piece per token, through
// tensor::axpy_tokens_by_rows. col0 and n are whole blocks of w's type.
constexpr int kTokensAtOnce = 8;
void accumulate_rows_tokens(const tensor::WeightView& w, std::span<const int32_t> ids, const float* coef, int m,
                            int64_t col0, int64_t n, float* const* y);

}  // namespace ember::model

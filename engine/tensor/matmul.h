#pragma once
// Dense matrix × activations on the CPU, for every supported weight type.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/quantize.h"
#include "tensor/thread_pool.h"

namespace ember::tensor {

// A 2-D weight as GGUF stores it: n_rows rows of n_cols contiguous elements (ne = [n_cols, n_rows]).
struct WeightView {
    DType type = DType::F32;
    int64_t n_cols = 0;  // ne[0], the input length
    int64_t n_rows = 0;  // ne[1], the output length
    const uint8_t* data = nullptr;
    size_t row_bytes = 0;

    const uint8_t* row(int64_t r) const { return data + size_t(r) * row_bytes; }
    // Rows [first, first + count): one part of a fused matrix (Phi 3's QKV, its gate and up);
    // whole groups of a grouped matrix (Q4_0_R8, Q8_0_R8, Q4_K_R8, Q5_K_R8, Q6_K_R8).
    WeightView rows(int64_t first, int64_t count) const;
};

// Row r as its file stores it (row_bytes bytes into out): what a device that knows only the
// stored types is given.
void row_as_stored(const WeightView& w, int64_t r, uint8_t* out);

// Activations converted once into a weight type's dot-product type, reused for every row.
// Sized at setup; prepare() never allocates when n_tokens * n_cols fits.
class PreparedActivations {
public:
    void reserve(int64_t max_tokens, int64_t max_cols);
    void set_q8_k_scale(Q8KScale scale) { q8_k_scale_ = scale; }
    // With a pool, a batch's rows are prepared on its threads.
    void prepare(DType weight_type, const float* x, int64_t n_tokens, int64_t n_cols, ThreadPool* pool = nullptr);

    const uint8_t* row(int64_t t) const { return data_ + size_t(t) * row_bytes_; }
    size_t row_stride() const { return row_bytes_; }

private:
    void grow(size_t bytes);


    std::vector<uint8_t> buffer_;
    uint8_t* data_ = nullptr;  // first 64-byte aligned byte of buffer_: rows start on cache lines
    size_t row_bytes_ = 0;
    Q8KScale q8_k_scale_ = Q8KScale::Upstream;
};

// Dot product of weight row `w_row` (type t) with one prepared activation row.
float dot_row(DType t, int64_t n, const uint8_t* w_row, const uint8_t* x_row);

// y[0, n) += a · the first n elements of weight row `w_row` (type t); n a multiple of its block.
void axpy_row(DType t, int64_t n, float a, const uint8_t* w_row, float* y);

// y[t * w.n_rows + r] = dot(w row r, x row t) for t < n_tokens. x: [n_tokens][w.n_cols].
void matmul(ThreadPool& pool, const WeightView& w, const float* x, int64_t n_tokens, float* y,
            PreparedActivations& scratch);

// The same over activations already prepared for w's type: row t at x + t * x_stride.
void matmul_prepared(ThreadPool& pool, const WeightView& w, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                     float* y);

// One token, chosen rows only: y[rows[i]] = dot(w row rows[i], x) for i < n_rows, rows
// ascending; x prepared for w's type. Rows as stored or interleaved (Q4_0_X16), not grouped.
void matmul_rows(ThreadPool& pool, const WeightView& w, const uint8_t* x, const int32_t* rows, int64_t n_rows, float* y);

}  // namespace ember::tensor

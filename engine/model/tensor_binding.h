#pragma once
// Looks up the tensors an architecture declares and checks each one's presence, shape and
// type against the declaration before any of its bytes are used.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gguf/gguf_reader.h"
#include "tensor/matmul.h"

namespace ember::model {

// The type TensorBinder::transposed_matrix() lays a stored [n_cols, n_rows] matrix of type
// `stored` out in: F32, F16, Q4_0 and Q8_0 stay themselves; another type becomes Q4_0 where its
// bytes hold that, in place; none when they do not (types under 4.5 bits a weight).
std::optional<tensor::DType> transposed_type(tensor::DType stored, int64_t n_cols, int64_t n_rows);

class TensorBinder {
public:
    explicit TensorBinder(const gguf::File& file) : file_(file) {}

    // A 2-D weight with ne = [n_cols, n_rows] in a type the kernels support, whose rows are read
    // by dot products only (matrix products, predictors, the sparse FFN's gate and up rows). A
    // Q4_0 one is re-laid as Q4_0_X16 when the CPU's kernels are faster on that and the file is
    // a copy in memory (not a map).
    tensor::WeightView matrix(const std::string& name, int64_t n_cols, int64_t n_rows);
    // Same, for a matrix only ever read whole by matrix products (attention's projections, a
    // dense FFN, the LM head): a Q4_0, Q8_0, Q4_K, Q5_K or Q6_K one is grouped by eight rows
    // (Q4_0_R8, …) when its row count allows, the CPU's kernels are faster on that and the file
    // is a copy in memory; a Q4_0 one not grouped is re-laid as matrix() does. A fused matrix names the row
    // counts of its parts, which must then be whole groups too.
    tensor::WeightView product_matrix(const std::string& name, int64_t n_cols, int64_t n_rows,
                                      std::initializer_list<int64_t> part_rows = {});
    // Same, rows kept as stored: for rows also read otherwise (token embeddings looked up, the
    // sparse down projection's rows scaled and added).
    tensor::WeightView stored_matrix(const std::string& name, int64_t n_cols, int64_t n_rows);
    // A [n_cols, n_rows] matrix transposed in place, as n_cols rows of n_rows (row i = column i
    // of the stored matrix), for reading the rows of chosen inputs only (a gate-first FFN's down
    // projection), in transposed_type(): F32, F16 and Q8_0 stay themselves exactly; Q4_0 is
    // quantized again along the new rows (a second rounding), as are the K-quants and the other
    // types of at least 4.5 bits a weight. The file must be a copy in memory, and a type too small
    // for Q4_0 has no transposed layout: both are errors naming the tensor.
    tensor::WeightView transposed_matrix(const std::string& name, int64_t n_cols, int64_t n_rows);
    // Same for each of a 3-D tensor's n_expert matrices (ne = [n_cols, n_rows, n_expert]): bound
    // as one matrix of n_expert · n_cols rows of n_rows, expert e's rows e·n_cols...
    tensor::WeightView transposed_experts(const std::string& name, int64_t n_cols, int64_t n_rows, int64_t n_expert);
    // How a 3-D expert tensor's rows are read: by matrix products only (grouped as
    // product_matrix() groups, when the row count allows), also one by one in dot products (laid
    // as matrix() lays them), or also scaled and added (kept as stored).
    enum class ExpertRows { Products, Dots, Stored };
    // A 3-D tensor of n_expert matrices of n_rows rows (ne = [n_cols, n_rows, n_expert]), bound as
    // one matrix whose expert e is rows e·n_rows...
    tensor::WeightView experts(const std::string& name, int64_t n_cols, int64_t n_rows, int64_t n_expert,
                               ExpertRows use = ExpertRows::Products);
    // Same, with the row count taken from the file (a predictor's rank), 1..max_rows.
    tensor::WeightView matrix_any_rows(const std::string& name, int64_t n_cols, int64_t max_rows);
    // A 1-D tensor holding two matrices one after the other, as one run of blocks: r rows of
    // n_cols, then n_rows rows of r (SmallThinker's lm_head_profiler, [r, n_embd] then
    // [n_vocab, r]). r is its length over n_cols + n_rows; both parts keep their stored layout.
    std::pair<tensor::WeightView, tensor::WeightView> stacked_matrices(const std::string& name, int64_t n_cols,
                                                                       int64_t n_rows);
    bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
    // A 1-D F32 vector of n elements (norm gains).
    const float* vector(const std::string& name, int64_t n);

    uint64_t bytes_bound() const { return bytes_bound_; }
    uint64_t params_bound() const { return params_bound_; }

private:
    const gguf::TensorInfo& find(const std::string& name) const;
    tensor::WeightView bind_matrix(const std::string& name, int64_t n_cols, int64_t n_rows);
    // t's bytes as n_rows rows of n_cols, its shape already checked.
    tensor::WeightView bind_rows(const gguf::TensorInfo& t, int64_t n_cols, int64_t n_rows);
    // w in the layout its kernels are fastest on: for a matrix read only whole (whole_products)
    // Q4_0_R8, Q8_0_R8, Q4_K_R8, Q5_K_R8 or Q6_K_R8, else Q4_0_X16 for Q4_0.
    tensor::WeightView relaid(const std::string& name, tensor::WeightView w, bool whole_products);
    [[noreturn]] void fail_bound_twice(const std::string& name) const;
    // The type and the writable bytes for transposing stored tensor `name` (w, its rows) into
    // n_cols rows of n_rows; errors name the tensor.
    std::pair<tensor::DType, uint8_t*> transposed_layout(const std::string& name, const tensor::WeightView& w, int64_t n_cols,
                                                         int64_t n_rows);
    // w ([n_rows] rows of n_cols) transposed into n_cols rows of type `to` at dst; dst may overlap
    // w's bytes, which are read whole before any is written.
    void transpose_into(const tensor::WeightView& w, tensor::DType to, uint8_t* dst);
    void check_shape(const gguf::TensorInfo& t, std::initializer_list<int64_t> expected) const;

    const gguf::File& file_;
    std::map<const uint8_t*, tensor::DType> layouts_;  // the layout each bound tensor's bytes have now
    std::vector<float> transpose_buffer_;  // transposed_matrix()'s floats, reused layer after layer
    uint64_t bytes_bound_ = 0;
    uint64_t params_bound_ = 0;
};

}  // namespace ember::model

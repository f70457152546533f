#pragma once
// Looks up the tensors an architecture declares and checks each one's presence, shape and
// type against the declaration before any of its bytes are used.

#include <cstdint>
#include <string>

#include "gguf/gguf_reader.h"
#include "tensor/matmul.h"

namespace ember::model {

class TensorBinder {
public:
    explicit TensorBinder(const gguf::File& file) : file_(file) {}

    // A 2-D weight with ne = [n_cols, n_rows] in a type the kernels support.
    tensor::WeightView matrix(const std::string& name, int64_t n_cols, int64_t n_rows);
    // Same, with the row count taken from the file (a predictor's rank), 1..max_rows.
    tensor::WeightView matrix_any_rows(const std::string& name, int64_t n_cols, int64_t max_rows);
    bool has(const std::string& name) const { return file_.find_tensor(name) != nullptr; }
    // A 1-D F32 vector of n elements (norm gains).
    const float* vector(const std::string& name, int64_t n);

    uint64_t bytes_bound() const { return bytes_bound_; }
    uint64_t params_bound() const { return params_bound_; }

private:
    const gguf::TensorInfo& find(const std::string& name) const;
    void check_shape(const gguf::TensorInfo& t, std::initializer_list<int64_t> expected) const;

    const gguf::File& file_;
    uint64_t bytes_bound_ = 0;
    uint64_t params_bound_ = 0;
};

}  // namespace ember::model

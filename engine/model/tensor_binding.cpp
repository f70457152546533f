#include "model/tensor_binding.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "common/error.h"
#include "gguf/ggml_type.h"
#include "tensor/kernels.h"
#include "tensor/q4_0_x16.h"
#include "tensor/thread_pool.h"

namespace ember::model {
namespace {

std::string shape_string(const std::vector<int64_t>& ne) {
    std::string s = "[";
    for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

// Re-lays a matrix's rows on every CPU this process may use: a 7B model's ~3.5 GiB take about a
// second on one core.
void interleave_rows(uint8_t* bytes, const tensor::WeightView& w) {
    const int64_t n_threads = std::min<int64_t>(tensor::default_thread_count(), std::max<int64_t>(1, w.n_rows / 256));
    const auto part = [&](int64_t t) {
        for (int64_t r = w.n_rows * t / n_threads; r < w.n_rows * (t + 1) / n_threads; ++r)
            tensor::interleave_q4_0_row(bytes + size_t(r) * w.row_bytes, w.n_cols);
    };
    std::vector<std::thread> helpers;
    for (int64_t t = 1; t < n_threads; ++t) helpers.emplace_back(part, t);
    part(0);
    for (std::thread& h : helpers) h.join();
}

}  // namespace

const gguf::TensorInfo& TensorBinder::find(const std::string& name) const {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (!t) fail(file_.path() + ": missing tensor '" + name + "'");
    return *t;
}

void TensorBinder::check_shape(const gguf::TensorInfo& t, std::initializer_list<int64_t> expected) const {
    if (!std::equal(t.ne.begin(), t.ne.end(), expected.begin(), expected.end()))
        fail(file_.path() + ": tensor '" + t.name + "' has shape " + shape_string(t.ne) + ", expected " +
             shape_string(std::vector<int64_t>(expected)));
}

tensor::WeightView TensorBinder::matrix(const std::string& name, int64_t n_cols, int64_t n_rows) {
    tensor::WeightView w = bind_matrix(name, n_cols, n_rows);
    if (w.type != tensor::DType::Q4_0 || !tensor::kernels().interleave_q4_0) return w;
    if (!interleaved_.contains(w.data)) {
        uint8_t* bytes = file_.writable_bytes(find(name));
        if (!bytes) return w;
        interleave_rows(bytes, w);
        interleaved_.insert(w.data);
    }
    w.type = tensor::DType::Q4_0_X16;
    return w;
}

tensor::WeightView TensorBinder::stored_matrix(const std::string& name, int64_t n_cols, int64_t n_rows) {
    tensor::WeightView w = bind_matrix(name, n_cols, n_rows);
    // An architecture binding one tensor both ways would read re-laid rows as stored ones.
    if (interleaved_.contains(w.data)) fail(file_.path() + ": tensor '" + name + "' is bound twice in different layouts");
    return w;
}

tensor::WeightView TensorBinder::bind_matrix(const std::string& name, int64_t n_cols, int64_t n_rows) {
    const gguf::TensorInfo& t = find(name);
    check_shape(t, {n_cols, n_rows});
    auto type = tensor::dtype_from_ggml(t.type);
    if (!type)
        fail(file_.path() + ": tensor '" + name + "' has type " + gguf::ggml_type_name(t.type) +
             ", which Ember cannot compute with (supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, "
             "Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS)");
    bytes_bound_ += t.nbytes;
    params_bound_ += uint64_t(t.nelements());
    return tensor::WeightView{*type, n_cols, n_rows, t.data, tensor::row_bytes(*type, n_cols)};
}

tensor::WeightView TensorBinder::matrix_any_rows(const std::string& name, int64_t n_cols, int64_t max_rows) {
    const gguf::TensorInfo& t = find(name);
    if (t.ne.size() != 2 || t.ne[0] != n_cols || t.ne[1] > max_rows)
        fail(file_.path() + ": tensor '" + name + "' has shape " + shape_string(t.ne) + ", expected [" +
             std::to_string(n_cols) + ", r] with r <= " + std::to_string(max_rows));
    return matrix(name, n_cols, t.ne[1]);
}

const float* TensorBinder::vector(const std::string& name, int64_t n) {
    const gguf::TensorInfo& t = find(name);
    check_shape(t, {n});
    if (t.type != 0)
        fail(file_.path() + ": tensor '" + name + "' has type " + gguf::ggml_type_name(t.type) + ", expected F32");
    bytes_bound_ += t.nbytes;
    params_bound_ += uint64_t(t.nelements());
    return reinterpret_cast<const float*>(t.data);
}

}  // namespace ember::model

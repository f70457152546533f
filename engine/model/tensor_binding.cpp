#include "model/tensor_binding.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <vector>

#include "common/error.h"
#include "gguf/ggml_type.h"
#include "tensor/kernels.h"
#include "tensor/grouped_rows.h"
#include "tensor/q4_0_x16.h"
#include "tensor/quantize.h"
#include "tensor/thread_pool.h"

namespace ember::model {
namespace {

std::string shape_string(const std::vector<int64_t>& ne) {
    std::string s = "[";
    for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

// fn(u) for u in [0, n_units), split over every CPU this process may use, each thread taking at
// least min_units: load-time work on whole matrices.
template <typename Fn>
void for_each_unit(int64_t n_units, int64_t min_units, Fn fn) {
    const int64_t n_threads = std::min<int64_t>(tensor::default_thread_count(), std::max<int64_t>(1, n_units / min_units));
    const auto part = [&](int64_t t) {
        for (int64_t u = n_units * t / n_threads; u < n_units * (t + 1) / n_threads; ++u) fn(u);
    };
    std::vector<std::thread> helpers;
    for (int64_t t = 1; t < n_threads; ++t) helpers.emplace_back(part, t);
    part(0);
    for (std::thread& h : helpers) h.join();
}

// Re-lays a matrix's rows, `step` at a time: a 7B model's ~3.5 GiB take about a second on one core.
template <typename Relay>
void relay_rows(uint8_t* bytes, const tensor::WeightView& w, int64_t step, Relay relay) {
    for_each_unit(w.n_rows / step, 256 / step, [&](int64_t u) { relay(bytes + size_t(u * step) * w.row_bytes, w.n_cols); });
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
    return relaid(name, bind_matrix(name, n_cols, n_rows), false);
}

tensor::WeightView TensorBinder::product_matrix(const std::string& name, int64_t n_cols, int64_t n_rows,
                                                std::initializer_list<int64_t> part_rows) {
    const bool whole_groups = std::all_of(part_rows.begin(), part_rows.end(), [](int64_t n) { return n % tensor::kR8Rows == 0; });
    return relaid(name, bind_matrix(name, n_cols, n_rows), whole_groups);
}

tensor::WeightView TensorBinder::experts(const std::string& name, int64_t n_cols, int64_t n_rows, int64_t n_expert,
                                        ExpertRows use) {
    const gguf::TensorInfo& t = find(name);
    check_shape(t, {n_cols, n_rows, n_expert});
    const tensor::WeightView w = bind_rows(t, n_cols, n_rows * n_expert);
    if (use == ExpertRows::Stored) {
        if (layouts_.emplace(w.data, w.type).first->second != w.type) fail_bound_twice(name);
        return w;
    }
    return relaid(name, w, use == ExpertRows::Products && n_rows % tensor::kR8Rows == 0);
}

tensor::WeightView TensorBinder::relaid(const std::string& name, tensor::WeightView w, bool whole_products) {
    using tensor::DType;
    const tensor::KernelTable& k = tensor::kernels();
    DType to = w.type;
    const std::optional<tensor::Grouping> grouping = tensor::grouping(w.type);
    if (whole_products && w.n_rows % tensor::kR8Rows == 0 && grouping && tensor::groups_rows(k, w.type)) to = grouping->grouped;
    if (to == w.type && w.type == DType::Q4_0 && k.interleave_q4_0) to = DType::Q4_0_X16;
    uint8_t* bytes = to == w.type ? nullptr : file_.writable_bytes(find(name));
    if (!bytes) to = w.type;  // a mapped file's pages stay as stored
    const auto [it, first] = layouts_.emplace(w.data, to);
    if (it->second != to) fail_bound_twice(name);
    if (first && to != w.type) {
        if (tensor::is_grouped(to))
            relay_rows(bytes, w, tensor::kR8Rows, grouping->group);
        else
            relay_rows(bytes, w, 1, tensor::interleave_q4_0_row);
    }
    w.type = to;
    return w;
}

std::optional<tensor::DType> transposed_type(tensor::DType stored, int64_t n_cols, int64_t n_rows) {
    using tensor::DType;
    if (stored == DType::F32 || stored == DType::F16 || stored == DType::Q4_0 || stored == DType::Q8_0) return stored;
    // Other types become Q4_0 rows, in place: their bytes must hold them.
    if (tensor::row_bytes(stored, n_cols) * uint64_t(n_rows) >= tensor::row_bytes(DType::Q4_0, n_rows) * uint64_t(n_cols))
        return DType::Q4_0;
    return std::nullopt;
}

std::pair<tensor::DType, uint8_t*> TensorBinder::transposed_layout(const std::string& name, const tensor::WeightView& w,
                                                                   int64_t n_cols, int64_t n_rows) {
    const std::optional<tensor::DType> to = transposed_type(w.type, n_cols, n_rows);
    if (!to)
        fail(file_.path() + ": tensor '" + name + "' is " + tensor::dtype_name(w.type) +
             "; skipping neurons or inputs reads it by columns, laid out as F32, F16, Q8_0 or Q4_0 in the tensor's own "
             "bytes, and " + tensor::dtype_name(w.type) + " is too small for Q4_0");
    if (n_rows % tensor::block_size(*to) != 0)
        fail(file_.path() + ": tensor '" + name + "' has " + std::to_string(n_rows) + " rows, not whole " +
             tensor::dtype_name(*to) + " blocks once transposed");
    uint8_t* bytes = file_.writable_bytes(find(name));
    if (!bytes) fail(file_.path() + ": skipping neurons or inputs lays '" + name + "' out anew, which needs the model read into memory (not mapped)");
    if (!layouts_.emplace(w.data, *to).second) fail_bound_twice(name);
    return {*to, bytes};
}

void TensorBinder::transpose_into(const tensor::WeightView& w, tensor::DType to, uint8_t* dst) {
    const int64_t n_rows = w.n_rows, n_cols = w.n_cols;
    const size_t out_row_bytes = tensor::row_bytes(to, n_rows);
    // Through floats: a block of 64 stored rows at a time is written into the new rows, so each
    // thread writes whole cache lines.
    // One buffer for every layer's matrix: a fresh one each time costs more in page faults and
    // zeroing than the transposition itself.
    if (transpose_buffer_.size() < size_t(n_cols) * size_t(n_rows)) transpose_buffer_.resize(size_t(n_cols) * size_t(n_rows));
    float* all = transpose_buffer_.data();
    constexpr int64_t kBand = 64;
    for_each_unit((n_rows + kBand - 1) / kBand, 4, [&](int64_t band) {
        const int64_t r0 = band * kBand, nr = std::min(kBand, n_rows - r0);
        std::vector<float> rows(size_t(nr) * size_t(n_cols));
        for (int64_t r = 0; r < nr; ++r) tensor::dequantize_row(w.type, w.row(r0 + r), rows.data() + size_t(r) * size_t(n_cols), n_cols);
        for (int64_t c = 0; c < n_cols; ++c)
            for (int64_t r = 0; r < nr; ++r) all[size_t(c) * size_t(n_rows) + size_t(r0 + r)] = rows[size_t(r) * size_t(n_cols) + size_t(c)];
    });
    for_each_unit(n_cols, 256, [&](int64_t c) {
        tensor::quantize_row(to, all + size_t(c) * size_t(n_rows), dst + size_t(c) * out_row_bytes, n_rows);
    });
}

tensor::WeightView TensorBinder::transposed_matrix(const std::string& name, int64_t n_cols, int64_t n_rows) {
    const tensor::WeightView w = bind_matrix(name, n_cols, n_rows);
    const auto [to, bytes] = transposed_layout(name, w, n_cols, n_rows);
    transpose_into(w, to, bytes);
    return {to, n_rows, n_cols, w.data, tensor::row_bytes(to, n_rows)};
}

tensor::WeightView TensorBinder::transposed_experts(const std::string& name, int64_t n_cols, int64_t n_rows, int64_t n_expert) {
    const gguf::TensorInfo& t = find(name);
    check_shape(t, {n_cols, n_rows, n_expert});
    const tensor::WeightView w = bind_rows(t, n_cols, n_rows * n_expert);
    const auto [to, bytes] = transposed_layout(name, w, n_cols, n_rows);
    // An expert's new rows take no more bytes than its stored ones (transposed_type never widens),
    // so expert e is written over bytes no later expert is read from.
    const size_t expert_bytes = size_t(n_cols) * tensor::row_bytes(to, n_rows);
    for (int64_t e = 0; e < n_expert; ++e) transpose_into(w.rows(e * n_rows, n_rows), to, bytes + size_t(e) * expert_bytes);
    return {to, n_rows, n_cols * n_expert, w.data, tensor::row_bytes(to, n_rows)};
}

tensor::WeightView TensorBinder::stored_matrix(const std::string& name, int64_t n_cols, int64_t n_rows) {
    tensor::WeightView w = bind_matrix(name, n_cols, n_rows);
    if (layouts_.emplace(w.data, w.type).first->second != w.type) fail_bound_twice(name);
    return w;
}

// An architecture binding one tensor in two layouts would read re-laid rows as stored ones.
void TensorBinder::fail_bound_twice(const std::string& name) const {
    fail(file_.path() + ": tensor '" + name + "' is bound twice in different layouts");
}

tensor::WeightView TensorBinder::bind_matrix(const std::string& name, int64_t n_cols, int64_t n_rows) {
    const gguf::TensorInfo& t = find(name);
    check_shape(t, {n_cols, n_rows});
    return bind_rows(t, n_cols, n_rows);
}

tensor::WeightView TensorBinder::bind_rows(const gguf::TensorInfo& t, int64_t n_cols, int64_t n_rows) {
    const std::string& name = t.name;
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

std::pair<tensor::WeightView, tensor::WeightView> TensorBinder::stacked_matrices(const std::string& name,
                                                                                 int64_t n_cols, int64_t n_rows) {
    const gguf::TensorInfo& t = find(name);
    const int64_t total = t.ne.size() == 2 && t.ne[1] == 1 ? t.ne[0] : (t.ne.size() == 1 ? t.ne[0] : -1);
    const int64_t r = total > 0 ? total / (n_cols + n_rows) : 0;
    const auto type = tensor::dtype_from_ggml(t.type);
    const int64_t block = type ? tensor::block_size(*type) : 1;
    if (r <= 0 || r * (n_cols + n_rows) != total || n_cols % block != 0 || r % block != 0)
        fail(file_.path() + ": tensor '" + name + "' has shape " + shape_string(t.ne) + ", expected r·(" +
             std::to_string(n_cols) + " + " + std::to_string(n_rows) + ") values as one row, r a multiple of " +
             std::to_string(block));
    const tensor::WeightView first = bind_rows(t, n_cols, r);
    const tensor::WeightView second{first.type, r, n_rows, first.data + size_t(r) * first.row_bytes,
                                    tensor::row_bytes(first.type, r)};
    return {first, second};
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

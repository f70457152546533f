#include "model/scattered_rows.h"

#include <algorithm>

#include "common/cpu_hints.h"
#include "tensor/kernels.h"

namespace ember::model {
namespace {

constexpr size_t kGroup = 4;
constexpr size_t kAxpyGroup = 8;

void axpy_f16_row(int64_t n, float a, const void* x, float* y) {
    tensor::axpy_row(tensor::DType::F16, n, a, static_cast<const uint8_t*>(x), y);
}
void axpy_f32_row(int64_t n, float a, const void* x, float* y) {
    tensor::axpy_row(tensor::DType::F32, n, a, static_cast<const uint8_t*>(x), y);
}

// The rows are summed this many outputs at a time: the outputs, eight rows' pieces and the next
// eight's prefetched pieces then stay in L1, where whole rows of a wide layer overflow it. A
// multiple of every row type's block (K-quants' 256).
constexpr int64_t kColumnsPerRun = 512;

void accumulate_run(const tensor::WeightView& w, std::span<const int32_t> ids, const float* coef, int64_t col0, int64_t n,
                    float* y) {
    const size_t offset = tensor::row_bytes(w.type, col0);
    const size_t bytes = tensor::row_bytes(w.type, n);
    size_t j = 0;
    if (w.type == tensor::DType::Q4_0 || w.type == tensor::DType::Q8_0 || w.type == tensor::DType::F16) {
        const tensor::KernelTable& k = tensor::kernels();
        const auto axpy8 = w.type == tensor::DType::Q4_0   ? k.axpy8_q4_0
                           : w.type == tensor::DType::Q8_0 ? k.axpy8_q8_0
                                                           : k.axpy8_f16;
        for (; j + kAxpyGroup <= ids.size(); j += kAxpyGroup) {
            for (size_t p = j + kAxpyGroup; p < std::min(ids.size(), j + 2 * kAxpyGroup); ++p)
                prefetch_bytes(w.row(ids[p]) + offset, bytes);
            const void* rows[kAxpyGroup];
            float c[kAxpyGroup];
            for (size_t r = 0; r < kAxpyGroup; ++r) {
                rows[r] = w.row(ids[j + r]) + offset;
                c[r] = coef[ids[j + r]];
            }
            axpy8(n, c, rows, y);
        }
    }
    for (; j < ids.size(); ++j) {
        if (j + 1 < ids.size()) prefetch_bytes(w.row(ids[j + 1]) + offset, bytes);
        tensor::axpy_row(w.type, n, coef[ids[j]], w.row(ids[j]) + offset, y);
    }
}

}  // namespace

void prefetch_bytes(const uint8_t* p, size_t n) {
    for (size_t off = 0; off < n; off += 64) ember::prefetch(p + off);
}

void dot_rows(const tensor::WeightView& w, std::span<const int32_t> ids, const uint8_t* x, float* out) {
    size_t j = 0;
    const bool x16 = w.type == tensor::DType::Q4_0_X16;
    if (x16 || w.type == tensor::DType::Q4_0) {
        const tensor::KernelTable& k = tensor::kernels();
        for (; j + kGroup <= ids.size(); j += kGroup) {
            for (size_t p = j + kGroup; p < std::min(ids.size(), j + 2 * kGroup); ++p) prefetch_bytes(w.row(ids[p]), w.row_bytes);
            const void* rows[kGroup];
            for (size_t r = 0; r < kGroup; ++r) rows[r] = w.row(ids[j + r]);
            if (x16)
                k.dot4_q4_0x16_q8_0(w.n_cols, rows, x, out + j, 0);
            else
                k.dot4_q4_0_q8_0(w.n_cols, rows, x, out + j);
        }
    }
    for (; j < ids.size(); ++j) {
        if (j + 1 < ids.size()) prefetch_bytes(w.row(ids[j + 1]), w.row_bytes);
        out[j] = tensor::dot_row(w.type, w.n_cols, w.row(ids[j]), x);
    }
}

void accumulate_rows(const tensor::WeightView& w, std::span<const int32_t> ids, const float* coef, int64_t col0, int64_t n,
                     float* y) {
    for (int64_t c = col0; c < col0 + n; c += kColumnsPerRun)
        accumulate_run(w, ids, coef, c, std::min(kColumnsPerRun, col0 + n - c), y + (c - col0));
}

void accumulate_rows_tokens(const tensor::WeightView& w, std::span<const int32_t> ids, const float* coef, int m,
                            int64_t col0, int64_t n, float* const* y) {
    if (ids.empty()) return;
    const tensor::KernelTable& k = tensor::kernels();
    // F16 and F32 rows have no fused kernel: the tables' by-rows sums, through axpy_row.
    const auto tokens = w.type == tensor::DType::Q4_0   ? k.axpy_tokens_q4_0
                        : w.type == tensor::DType::Q8_0 ? k.axpy_tokens_q8_0
                        : w.type == tensor::DType::F16  ? tensor::axpy_tokens_by_rows<axpy_f16_row, 32 * sizeof(uint16_t)>
                                                        : tensor::axpy_tokens_by_rows<axpy_f32_row, 32 * sizeof(float)>;
    tokens(n, w.row(0) + tensor::row_bytes(w.type, col0), w.row_bytes, ids.data(), int64_t(ids.size()), coef, m, y);
}

}  // namespace ember::model

#include "tensor/matmul.h"

#include <algorithm>
#include <cstring>

#include "common/error.h"
#include "tensor/fp16.h"
#include "tensor/kernels.h"
#include "tensor/grouped_rows.h"
#include "tensor/q4_0_x16.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace ember::tensor {

void PreparedActivations::reserve(int64_t max_tokens, int64_t max_cols) {
    // The widest activation row: F32, or the table's packed Q8 layouts, which can be wider.
    const size_t widest = std::max(size_t(max_cols) * sizeof(float), kernels().q8_activation_bytes(max_cols));
    grow(size_t(max_tokens) * ((widest + 63) / 64 * 64));
}

void PreparedActivations::grow(size_t bytes) {
    if (bytes + 64 <= buffer_.size()) return;
    buffer_.resize(bytes + 64);
    const auto addr = reinterpret_cast<uintptr_t>(buffer_.data());
    data_ = buffer_.data() + (64 - addr % 64) % 64;
}

void PreparedActivations::prepare(DType weight_type, const float* x, int64_t n_tokens, int64_t n_cols,
                                  ThreadPool* pool) {
    const KernelTable& k = kernels();
    const DType type = activation_type(weight_type);
    // Rows start on cache lines, for the SIMD kernels' loads.
    const size_t bytes = type == DType::Q8_0 ? k.q8_activation_bytes(n_cols) : row_bytes(type, n_cols);
    row_bytes_ = (bytes + 63) / 64 * 64;
    grow(row_bytes_ * size_t(n_tokens));
    const auto token = [&](int64_t t) {
        const float* src = x + t * n_cols;
        uint8_t* dst = data_ + size_t(t) * row_bytes_;
        switch (type) {
            case DType::Q8_0: k.prepare_q8_activation(src, dst, n_cols); break;
            case DType::F16: k.f32_to_f16(src, reinterpret_cast<uint16_t*>(dst), n_cols); break;
            case DType::F32: std::memcpy(dst, src, size_t(n_cols) * 4); break;
            case DType::Q8_K: k.quantize_q8_k(src, dst, n_cols, q8_k_scale_); break;
            default: quantize_row(type, src, dst, n_cols); break;
        }
    };
    // A prompt's rows on every thread: one thread preparing them left the others idle for a
    // tenth of a Q4_K prompt's time.
    constexpr int64_t kTokensPerTask = 4;
    if (pool && n_tokens > kTokensPerTask)
        return pool->run((n_tokens + kTokensPerTask - 1) / kTokensPerTask, [&](int64_t task, int) {
            for (int64_t t = task * kTokensPerTask; t < std::min(n_tokens, (task + 1) * kTokensPerTask); ++t) token(t);
        });
    for (int64_t t = 0; t < n_tokens; ++t) token(t);
}

void row_as_stored(const WeightView& w, int64_t r, uint8_t* out) {
    if (w.type == DType::Q4_0_X16)
        q4_0_row_from_x16(w.row(r), w.n_cols, out);
    else if (is_grouped(w.type))
        grouping(w.type)->row_from(w.row(r / kR8Rows * kR8Rows), w.n_cols, int(r % kR8Rows), out);
    else
        std::memcpy(out, w.row(r), w.row_bytes);
}

WeightView WeightView::rows(int64_t first, int64_t count) const {
    if (is_grouped(type) && (first % kR8Rows || count % kR8Rows))
        fail("rows " + std::to_string(first) + ".." + std::to_string(first + count) + " of a matrix grouped by " +
             std::to_string(kR8Rows) + " rows");
    return {type, n_cols, count, row(first), row_bytes};
}

float dot_row(DType t, int64_t n, const uint8_t* w, const uint8_t* x) {
    const KernelTable& k = kernels();
    switch (t) {
        case DType::F32: return k.dot_f32(n, reinterpret_cast<const float*>(w), reinterpret_cast<const float*>(x));
        case DType::F16:
            return k.dot_f16(n, reinterpret_cast<const uint16_t*>(w), reinterpret_cast<const uint16_t*>(x));
        case DType::BF16:
            return k.dot_bf16(n, reinterpret_cast<const uint16_t*>(w), reinterpret_cast<const uint16_t*>(x));
        case DType::Q4_0: return k.dot_q4_0_q8_0(n, w, x);
        case DType::Q4_0_X16: return k.dot_q4_0x16_q8_0(n, w, x);
        case DType::Q8_0: return k.dot_q8_0_q8_0(n, w, x);
        case DType::Q4_1: return k.dot_q4_1_q8_0(n, w, x);
        case DType::Q5_0: return k.dot_q5_0_q8_0(n, w, x);
        case DType::Q5_1: return k.dot_q5_1_q8_0(n, w, x);
        case DType::IQ4_NL: return k.dot_iq4_nl_q8_0(n, w, x);
        case DType::Q2_K: return k.dot_q2_k_q8_k(n, w, x);
        case DType::Q3_K: return k.dot_q3_k_q8_k(n, w, x);
        case DType::Q4_K: return k.dot_q4_k_q8_k(n, w, x);
        case DType::Q5_K: return k.dot_q5_k_q8_k(n, w, x);
        case DType::Q6_K: return k.dot_q6_k_q8_k(n, w, x);
        case DType::IQ4_XS: return k.dot_iq4_xs_q8_k(n, w, x);
        case DType::Q8_K: case DType::Q4_0_R8: case DType::Q8_0_R8: case DType::Q4_K_R8: case DType::Q5_K_R8:
        case DType::Q6_K_R8:
            break;
    }
    fail(std::string("no single-row dot product for ") + dtype_name(t) + " weights");
}

void axpy_row(DType t, int64_t n, float a, const uint8_t* w, float* y) {
    const KernelTable& k = kernels();
    switch (t) {
        case DType::F16: k.axpy_f16(n, a, reinterpret_cast<const uint16_t*>(w), y); return;
        case DType::Q4_0: k.axpy_q4_0(n, a, w, y); return;
        case DType::Q8_0: k.axpy_q8_0(n, a, w, y); return;
        case DType::Q4_K: k.axpy_q4_k(n, a, w, y); return;
        case DType::Q5_K: k.axpy_q5_k(n, a, w, y); return;
        case DType::Q6_K: k.axpy_q6_k(n, a, w, y); return;
        case DType::F32: {
            const float* r = reinterpret_cast<const float*>(w);
            for (int64_t i = 0; i < n; ++i) y[i] += a * r[i];
            return;
        }
        case DType::BF16: {
            const uint16_t* r = reinterpret_cast<const uint16_t*>(w);
            for (int64_t i = 0; i < n; ++i) y[i] += a * bf16_to_f32(r[i]);
            return;
        }
        case DType::Q8_K: case DType::Q4_0_X16: case DType::Q4_0_R8: case DType::Q8_0_R8: case DType::Q4_K_R8:
        case DType::Q5_K_R8: case DType::Q6_K_R8:
            break;
        default: {
            // The other block types: a block at a time through its dequantizer. Correct, not tuned.
            const int64_t block = block_size(t);
            const size_t block_bytes = row_bytes(t, block);
            float values[kQK_K];
            for (int64_t i = 0; i < n; i += block, w += block_bytes) {
                dequantize_row(t, w, values, block);
                for (int64_t j = 0; j < block; ++j) y[i + j] += a * values[j];
            }
            return;
        }
    }
    fail(std::string("no row axpy for ") + dtype_name(t) + " weights");
}

void matmul(ThreadPool& pool, const WeightView& w, const float* x, int64_t n_tokens, float* y,
            PreparedActivations& scratch) {
    scratch.prepare(w.type, x, n_tokens, w.n_cols, &pool);
    matmul_prepared(pool, w, scratch.row(0), scratch.row_stride(), n_tokens, y);
}

// The kernel that dots one row with four tokens, for the types that have one.
using DotTokens4 = void (*)(int64_t, const void*, const void* const*, float*);
DotTokens4 four_token_kernel(DType t) {
    switch (t) {
        case DType::Q4_K: return kernels().dot_q4_k_q8_k_x4;
        case DType::Q5_K: return kernels().dot_q5_k_q8_k_x4;
        case DType::Q6_K: return kernels().dot_q6_k_q8_k_x4;
        case DType::Q4_1: return kernels().dot_q4_1_q8_0_x4;
        case DType::Q5_0: return kernels().dot_q5_0_q8_0_x4;
        case DType::Q5_1: return kernels().dot_q5_1_q8_0_x4;
        case DType::IQ4_NL: return kernels().dot_iq4_nl_q8_0_x4;
        case DType::Q2_K: return kernels().dot_q2_k_q8_k_x4;
        case DType::Q3_K: return kernels().dot_q3_k_q8_k_x4;
        case DType::IQ4_XS: return kernels().dot_iq4_xs_q8_k_x4;
        default: return nullptr;
    }
}

// How far ahead each of the four row streams is prefetched: the hardware prefetcher alone keeps
// too few misses in flight once the kernel no longer waits on shuffles.
constexpr size_t kStreamPrefetch = 2048;

namespace {

// Grouped rows: each task takes whole groups of eight rows; a batch meets each group 64 tokens at a
// time, which keeps the task's rows and those tokens' activations in L2.
void matmul_grouped(ThreadPool& pool, const WeightView& w, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                    float* y) {
    const int64_t n_groups = w.n_rows / kR8Rows;
    const size_t group_bytes = size_t(kR8Rows) * w.row_bytes;
    const GroupedEntries entries = grouped_entries(kernels(), w.type);
    // A matrix unit takes groups in pairs and sixteen tokens at a time.
    const bool whole_task = entries.gemm_groups && n_tokens >= 16;
    int64_t per_task = std::max<int64_t>(1, n_groups / (int64_t(pool.size()) * 8));
    if (n_tokens > 1) per_task = std::clamp<int64_t>(int64_t((128u << 10) / group_bytes), 1, per_task);
    if (whole_task) per_task = (per_task + 1) / 2 * 2;
    const int64_t n_tasks = (n_groups + per_task - 1) / per_task;
    constexpr int64_t kTokenBlock = 64;
    pool.run(n_tasks, [&](int64_t task, int) {
        int64_t g0 = task * per_task;
        const int64_t g1 = std::min(n_groups, g0 + per_task);
        if (whole_task)
            return entries.gemm_groups(w.n_cols, w.row(g0 * kR8Rows), g1 - g0, x, x_stride, n_tokens,
                                       y + g0 * kR8Rows, size_t(w.n_rows));
        if (n_tokens == 1) {
            // Four streams a quarter of the task apart, as for Q4_0 rows as stored.
            const int64_t q = (g1 - g0) / 4;
            for (int64_t i = 0; i < q; ++i) {
                const void* groups[4];
                float* ys[4];
                for (int s = 0; s < 4; ++s) {
                    groups[s] = w.row((g0 + s * q + i) * kR8Rows);
                    ys[s] = y + (g0 + s * q + i) * kR8Rows;
                }
                entries.gemv4(w.n_cols, groups, x, ys, kStreamPrefetch);
            }
            g0 += 4 * q;
        }
        for (int64_t t0 = 0; t0 < n_tokens; t0 += kTokenBlock) {
            const int64_t nt = std::min(kTokenBlock, n_tokens - t0);
            for (int64_t g = g0; g < g1; ++g)
                entries.gemm(w.n_cols, w.row(g * kR8Rows), x + size_t(t0) * x_stride, x_stride, nt,
                             y + t0 * w.n_rows + g * kR8Rows, size_t(w.n_rows));
        }
    });
}

}  // namespace

void matmul_rows(ThreadPool& pool, const WeightView& w, const uint8_t* x, const int32_t* rows, int64_t n_rows,
                 float* y) {
    constexpr int64_t kRowsPerTask = 64;
    if (is_grouped(w.type)) fail(std::string("chosen rows of a ") + dtype_name(w.type) + " matrix: bind it row by row");
    const KernelTable& k = kernels();
    pool.run((n_rows + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t task, int) {
        const int64_t i1 = std::min(n_rows, (task + 1) * kRowsPerTask);
        for (int64_t i = task * kRowsPerTask; i < i1;) {
            if ((w.type == DType::Q4_0_X16 || w.type == DType::Q4_0) && i + 4 <= i1) {
                // Four chosen rows at once, the next four prefetched meanwhile (chosen rows may
                // lie far apart, so no hardware prefetcher sees them coming).
                const void* four[4] = {w.row(rows[i]), w.row(rows[i + 1]), w.row(rows[i + 2]), w.row(rows[i + 3])};
                for (int64_t j = i + 4; j < std::min(i1, i + 8); ++j)
                    for (size_t line = 0; line < w.row_bytes; line += 64)
                        __builtin_prefetch(w.row(rows[j]) + line);
                float out[4];
                if (w.type == DType::Q4_0_X16)
                    k.dot4_q4_0x16_q8_0(w.n_cols, four, x, out, 0);
                else
                    k.dot4_q4_0_q8_0(w.n_cols, four, x, out);
                for (int j = 0; j < 4; ++j) y[rows[i + j]] = out[j];
                i += 4;
                continue;
            }
            y[rows[i]] = dot_row(w.type, w.n_cols, w.row(rows[i]), x);
            ++i;
        }
    });
}

void matmul_prepared(ThreadPool& pool, const WeightView& w, const uint8_t* x, size_t x_stride, int64_t n_tokens,
                     float* y) {
    if (is_grouped(w.type)) return matmul_grouped(pool, w, x, x_stride, n_tokens, y);
    // One token: split the rows evenly, a few tasks per thread for balance. A batch: blocks of
    // rows small enough to stay in L2 while every token's activation streams past them.
    int64_t rows_per_task = std::max<int64_t>(16, w.n_rows / (int64_t(pool.size()) * 8));
    if (n_tokens > 1) rows_per_task = std::clamp<int64_t>(int64_t((128u << 10) / w.row_bytes), 4, rows_per_task);
    const int64_t n_tasks = (w.n_rows + rows_per_task - 1) / rows_per_task;
    const auto dot_tokens4 = four_token_kernel(w.type);
    pool.run(n_tasks, [&](int64_t task, int) {
        const int64_t r0 = task * rows_per_task;
        const int64_t r1 = std::min(w.n_rows, r0 + rows_per_task);
        int64_t t0 = 0;
        if (dot_tokens4 && n_tokens >= 4) {
            // Four tokens at a time meet each row of the task's block (which stays in L2): a row
            // is unpacked once per four tokens.
            t0 = n_tokens / 4 * 4;
            for (int64_t t = 0; t < t0; t += 4) {
                const void* xs[4] = {x + size_t(t) * x_stride, x + size_t(t + 1) * x_stride,
                                     x + size_t(t + 2) * x_stride, x + size_t(t + 3) * x_stride};
                for (int64_t r = r0; r < r1; ++r) {
                    float out[4];
                    dot_tokens4(w.n_cols, w.row(r), xs, out);
                    for (int j = 0; j < 4; ++j) y[(t + j) * w.n_rows + r] = out[j];
                }
            }
        }
        for (int64_t t = t0; t < n_tokens; ++t) {
            const uint8_t* xt = x + size_t(t) * x_stride;
            float* yt = y + t * w.n_rows;
            int64_t r = r0;
            if (w.type == DType::Q4_0 || w.type == DType::Q4_0_X16) {
                // Four sequential streams a quarter of the task's rows apart: more misses in flight
                // than one stream, and each still a run the hardware prefetcher follows (four
                // adjacent rows at once measured 14 % slower, this 15 % faster than one row).
                const KernelTable& k = kernels();
                const int64_t q = (r1 - r0) / 4;
                for (int64_t i = 0; i < q; ++i) {
                    const void* rows[4] = {w.row(r0 + i), w.row(r0 + q + i), w.row(r0 + 2 * q + i), w.row(r0 + 3 * q + i)};
                    float out[4];
                    if (w.type == DType::Q4_0)
                        k.dot4_q4_0_q8_0(w.n_cols, rows, xt, out);
                    else
                        k.dot4_q4_0x16_q8_0(w.n_cols, rows, xt, out, kStreamPrefetch);
                    for (int j = 0; j < 4; ++j) yt[r0 + j * q + i] = out[j];
                }
                r = r0 + 4 * q;
            }
            for (; r < r1; ++r) yt[r] = dot_row(w.type, w.n_cols, w.row(r), xt);
        }
    });
}

}  // namespace ember::tensor

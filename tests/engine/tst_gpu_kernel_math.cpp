// The GPU kernels' arithmetic (engine/backend/cuda/ffn_math.h, attention_math.h, layer_math.h), run on the CPU
// with the lanes of a row, the chunks of the down-projection and attention's per-thread sums
// reduced as the kernels reduce them, against the CPU kernels. It checks block layouts, nibble order, lane striding and odd widths on machines
// without a GPU; tst_backend_ops checks the kernels themselves where there is one.
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cuda/attention_math.h"
#include "backend/cuda/ffn_math.h"
#include "backend/cuda/layer_math.h"
#include "random_vectors.h"
#include "tensor/attention_head.h"
#include "tensor/matmul.h"
#include "tensor/quantize.h"
#include "tensor/rope.h"

using ember::tensor::DType;
namespace gpu = ember::backend::gpu;

namespace {

using test_helpers::random_vector;

std::vector<uint8_t> quantized(DType t, const std::vector<float>& x) {
    std::vector<uint8_t> out(ember::tensor::row_bytes(t, int64_t(x.size())));
    ember::tensor::quantize_row(t, x.data(), out.data(), int64_t(x.size()));
    return out;
}

// What dots_kernel computes for one row: each lane's share, then the shuffle tree's sum.
float gpu_dot(DType t, const uint8_t* w, const uint8_t* x, int64_t n) {
    float lane[gpu::kLanes];
    for (int l = 0; l < gpu::kLanes; ++l) {
        switch (t) {
            case DType::F16: lane[l] = gpu::dot_f16_lane(w, x, n, l); break;
            case DType::Q4_0: lane[l] = gpu::dot_q4_0_lane(w, x, n, l); break;
            default: lane[l] = gpu::dot_q8_0_lane(w, x, n, l); break;
        }
    }
    for (int offset = gpu::kLanes / 2; offset > 0; offset /= 2)
        for (int l = 0; l + offset < gpu::kLanes; ++l) lane[l] += lane[l + offset];
    return lane[0];
}

float gpu_value(DType t, const uint8_t* w, int64_t c) {
    switch (t) {
        case DType::F16: return gpu::value_f16(w, c);
        case DType::Q4_0: return gpu::value_q4_0(w, c);
        default: return gpu::value_q8_0(w, c);
    }
}

// What attention_kernel computes for one head: per-thread strided maxima and sums of the F16
// softmax weights, reduced by the kernel's tree, then each output element summed in order.
std::vector<float> gpu_attention_head(const float* q, const uint16_t* k, const uint16_t* v, size_t stride,
                                      int32_t n_keys, int32_t hd, float scale) {
    constexpr int threads = gpu::kAttentionThreads;
    std::vector<uint16_t> q_half(static_cast<size_t>(hd));
    for (int32_t d = 0; d < hd; ++d) q_half[size_t(d)] = gpu::float_to_half(q[d]);
    std::vector<float> scores(static_cast<size_t>(n_keys)), part(threads, -INFINITY);
    for (int32_t p = 0; p < n_keys; ++p) {
        scores[size_t(p)] = gpu::attention_score(k + size_t(p) * stride, q_half.data(), hd, scale);
        part[size_t(p % threads)] = std::max(part[size_t(p % threads)], scores[size_t(p)]);
    }
    auto reduce = [&](auto op) {
        for (int width = threads / 2; width > 0; width /= 2)
            for (int i = 0; i < width; ++i) part[size_t(i)] = op(part[size_t(i)], part[size_t(i + width)]);
        return part[0];
    };
    const float max = reduce([](float a, float b) { return std::max(a, b); });
    std::fill(part.begin(), part.end(), 0.0f);
    for (int32_t p = 0; p < n_keys; ++p) {
        scores[size_t(p)] = gpu::softmax_weight(scores[size_t(p)], max);
        part[size_t(p % threads)] += scores[size_t(p)];
    }
    const float inv = 1.0f / reduce([](float a, float b) { return a + b; });
    std::vector<float> out(static_cast<size_t>(hd), 0.0f);
    for (int32_t d = 0; d < hd; ++d)
        for (int32_t p = 0; p < n_keys; ++p)
            out[size_t(d)] += gpu::round_to_half(scores[size_t(p)] * inv) * gpu::half_to_float(v[size_t(p) * stride + size_t(d)]);
    return out;
}

}  // namespace

class TestGpuKernelMath : public QObject {
    Q_OBJECT

private slots:
    void dot_matches_cpu_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("n");
        for (DType t : {DType::F16, DType::Q4_0, DType::Q8_0})
            for (int n : {32, 64, 96, 1024, 1056, 4096, 11008}) QTest::addRow("%s n=%d", ember::tensor::dtype_name(t), n) << int(t) << n;
        // Odd F16 widths take the 16-bit path.
        QTest::addRow("F16 n=33") << int(DType::F16) << 33;
        QTest::addRow("F16 n=4095") << int(DType::F16) << 4095;
    }

    void dot_matches_cpu() {
        QFETCH(int, type);
        QFETCH(int, n);
        const DType t = DType(type);
        ember::tensor::PreparedActivations x;
        x.reserve(1, n);
        const std::vector<float> xf = random_vector(size_t(n), 1);
        x.prepare(t, xf.data(), 1, n);
        for (uint32_t row = 0; row < 8; ++row) {
            const std::vector<uint8_t> w = quantized(t, random_vector(size_t(n), 100 + row));
            const float want = ember::tensor::dot_row(t, n, w.data(), x.row(0));
            const float got = gpu_dot(t, w.data(), x.row(0), n);
            QVERIFY2(std::fabs(got - want) <= 2e-5f * std::sqrt(float(n)) * (1.0f + std::fabs(want)),
                     qPrintable(QStringLiteral("row %1: %2, the CPU says %3").arg(row).arg(got).arg(want)));
        }
    }

    void down_matches_cpu_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("n_out");
        QTest::addColumn<int>("rows");
        for (DType t : {DType::F16, DType::Q4_0, DType::Q8_0})
            for (int rows : {1, 63, 64, 65, 300}) QTest::addRow("%s rows=%d", ember::tensor::dtype_name(t), rows) << int(t) << 160 << rows;
    }

    // What down_kernel and sum_chunks_kernel compute: per column, chunks of kDownChunk rows in
    // order, then the chunks in order, skipping zero coefficients.
    void down_matches_cpu() {
        QFETCH(int, type);
        QFETCH(int, n_out);
        QFETCH(int, rows);
        const DType t = DType(type);
        std::vector<std::vector<uint8_t>> w;
        for (int r = 0; r < rows; ++r) w.push_back(quantized(t, random_vector(size_t(n_out), 500 + uint32_t(r))));
        std::vector<float> coef = random_vector(size_t(rows), 7);
        for (size_t j = 0; j < coef.size(); j += 4) coef[j] = 0.0f;
        std::vector<float> want(size_t(n_out), 0.0f);
        for (int r = 0; r < rows; ++r) ember::tensor::axpy_row(t, n_out, coef[size_t(r)], w[size_t(r)].data(), want.data());
        for (int64_t c = 0; c < n_out; ++c) {
            float y = 0.0f;
            for (int32_t k = 0; k < gpu::down_chunks(rows); ++k) {
                float partial = 0.0f;
                for (int32_t j = k * gpu::kDownChunk; j < std::min(rows, (k + 1) * gpu::kDownChunk); ++j)
                    if (coef[size_t(j)] != 0.0f) partial += coef[size_t(j)] * gpu_value(t, w[size_t(j)].data(), c);
                y += partial;
            }
            QVERIFY2(std::fabs(y - want[size_t(c)]) <= 1e-5f * float(rows) * (1.0f + std::fabs(want[size_t(c)])),
                     qPrintable(QStringLiteral("column %1: %2, the CPU says %3").arg(c).arg(y).arg(want[size_t(c)])));
        }
    }

    void attention_matches_cpu_data() {
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("n_keys");
        for (int hd : {64, 80, 128})
            for (int n_keys : {1, 7, 128, 129, 1000}) QTest::addRow("head %d, %d keys", hd, n_keys) << hd << n_keys;
    }

    void attention_matches_cpu() {
        QFETCH(int, head_dim);
        QFETCH(int, n_keys);
        const size_t stride = size_t(head_dim) * 2;  // two KV heads; this one is the second
        const std::vector<float> kf = random_vector(stride * size_t(n_keys), 31), vf = random_vector(stride * size_t(n_keys), 32);
        std::vector<uint16_t> k(kf.size()), v(vf.size());
        for (size_t i = 0; i < kf.size(); ++i) {
            k[i] = ember::tensor::f32_to_fp16(kf[i]);
            v[i] = ember::tensor::f32_to_fp16(vf[i]);
        }
        // Queries of a few sizes: sharp and flat softmax distributions.
        for (float sharpness : {0.1f, 1.0f, 8.0f}) {
            std::vector<float> q = random_vector(size_t(head_dim), 33);
            for (float& x : q) x *= sharpness;
            const float scale = 1.0f / std::sqrt(float(head_dim));
            std::vector<uint16_t> half(size_t(std::max(head_dim, n_keys)));
            std::vector<float> scores(static_cast<size_t>(n_keys)), want(static_cast<size_t>(head_dim));
            const uint16_t* k_head = k.data() + head_dim;
            const uint16_t* v_head = v.data() + head_dim;
            ember::tensor::attend_head(q.data(), k_head, v_head, stride, n_keys, head_dim, scale, half.data(), scores.data(),
                                       want.data());
            const std::vector<float> got = gpu_attention_head(q.data(), k_head, v_head, stride, n_keys, head_dim, scale);
            // As in tst_backend_ops: about one F16 step of the largest value (below 6).
            for (int d = 0; d < head_dim; ++d)
                QVERIFY2(std::fabs(got[size_t(d)] - want[size_t(d)]) <= 6.0f / 2048,
                         qPrintable(QStringLiteral("sharpness %1, element %2: %3, the CPU says %4")
                                        .arg(sharpness).arg(d).arg(got[size_t(d)]).arg(want[size_t(d)])));
        }
    }

    // The activation the layer kernels prepare for Q4_0/Q8_0 products: the reference Q8_0 blocks,
    // byte for byte, including all-zero and tiny blocks.
    void q8_activation_matches_cpu() {
        std::vector<float> x = random_vector(32 * 40, 61);
        for (int j = 0; j < 32; ++j) x[size_t(j)] = 0.0f;
        for (int j = 32; j < 64; ++j) x[size_t(j)] *= 1e-30f;
        std::vector<uint8_t> want(size_t(40) * 34), got(want.size());
        ember::tensor::quantize_row_q8_0_ref(x.data(), want.data(), int64_t(x.size()));
        for (int b = 0; b < 40; ++b) gpu::quantize_q8_0_block(x.data() + b * 32, got.data() + b * 34);
        QCOMPARE(got, want);
    }

    // RoPE's pair rotation, for both pairings and a head size that is not a power of two.
    void rope_matches_cpu() {
        const int32_t n_heads = 3, head_dim = 48;
        std::vector<float> angles(static_cast<size_t>(head_dim));
        ember::tensor::rope_angles(17, head_dim, 10000.0f, 1.0f, nullptr, angles.data());
        for (bool neox : {false, true}) {
            std::vector<float> want = random_vector(size_t(n_heads * head_dim), 62), got = want;
            ember::tensor::rope_rotate(want.data(), n_heads, head_dim, angles.data(),
                                       neox ? ember::tensor::RopePairs::NeoX : ember::tensor::RopePairs::Adjacent);
            for (int32_t h = 0; h < n_heads; ++h)
                for (int32_t j = 0; j < head_dim / 2; ++j) {
                    float* head = got.data() + h * head_dim;
                    gpu::rope_pair(head + gpu::rope_first(j, neox), head + gpu::rope_second(j, head_dim, neox),
                                   angles.data(), j, head_dim);
                }
            QCOMPARE(got, want);
        }
    }

    void chunks_cover_every_row() {
        QCOMPARE(gpu::down_chunks(0), 0);
        QCOMPARE(gpu::down_chunks(1), 1);
        QCOMPARE(gpu::down_chunks(gpu::kDownChunk), 1);
        QCOMPARE(gpu::down_chunks(gpu::kDownChunk + 1), 2);
    }
};

QTEST_GUILESS_MAIN(TestGpuKernelMath)
#include "tst_gpu_kernel_math.moc"

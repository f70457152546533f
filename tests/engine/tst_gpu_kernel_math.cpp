// The GPU kernels' arithmetic (engine/backend/cuda/ffn_math.h), run on the CPU with the lanes of
// a row and the chunks of the down-projection summed as the kernels sum them, against the CPU
// kernels. It checks block layouts, nibble order, lane striding and odd widths on machines
// without a GPU; tst_backend_ops checks the kernels themselves where there is one.
#include <QtTest>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cuda/ffn_math.h"
#include "random_vectors.h"
#include "tensor/matmul.h"
#include "tensor/quantize.h"

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

    void chunks_cover_every_row() {
        QCOMPARE(gpu::down_chunks(0), 0);
        QCOMPARE(gpu::down_chunks(1), 1);
        QCOMPARE(gpu::down_chunks(gpu::kDownChunk), 1);
        QCOMPARE(gpu::down_chunks(gpu::kDownChunk + 1), 2);
    }
};

QTEST_GUILESS_MAIN(TestGpuKernelMath)
#include "tst_gpu_kernel_math.moc"

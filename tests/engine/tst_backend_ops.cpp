// Every op of the device seam (gathered gate/up dot products, the ordered down-projection sum,
// dense matrix products, attention, whole attention sub-layers, residency changes) × weight type × shape, on every device this machine has, against the CPU
// kernels. The `sim` device is always here; GPUs are tested when probe_gpus() finds one, and
// the GPU test says why it was skipped otherwise.
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "backend/device.h"
#include "backend/gpu.h"
#include "common/error.h"
#include "random_vectors.h"
#include "tensor/attention_head.h"
#include "tensor/fp16.h"
#include "tensor/matmul.h"
#include "tensor/norms.h"
#include "tensor/quantize.h"
#include "tensor/rope.h"
#include "tensor/thread_pool.h"

#include "backend_test_helpers.h"

using namespace backend_test;

class TestBackendOps : public QObject {
    Q_OBJECT

private slots:
    void gpu_present() {
        const ember::GpuProbe probe = ember::probe_gpus();
        // gpu-check.sh sets EMBER_REQUIRE_GPU: on the GPU machine a missing GPU is a failure.
        if (!probe.first_usable() && qEnvironmentVariableIsSet("EMBER_REQUIRE_GPU"))
            QFAIL(qPrintable("EMBER_REQUIRE_GPU is set but there is no usable GPU: " + QString::fromStdString(probe.reason)));
        if (!probe.first_usable())
            QSKIP(qPrintable(QStringLiteral("no GPU to test (%1): %2")
                                 .arg(probe.api.empty() ? QStringLiteral("no GPU backend") : QString::fromStdString(probe.api),
                                      QString::fromStdString(probe.reason))));
        for (const ember::GpuInfo& g : probe.gpus) {
            qInfo("GPU %d: %s (%s), %.1f of %.1f GiB free%s%s", g.index, g.name.c_str(), g.arch.c_str(),
                  double(g.free_bytes) / double(1ull << 30), double(g.total_bytes) / double(1ull << 30),
                  g.unusable.empty() ? "" : ": ", g.unusable.c_str());
            QVERIFY(g.free_bytes <= g.total_bytes);
        }
        QVERIFY(!probe.api.empty());
    }

    void ops_match_the_cpu_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("n_embd");
        QTest::addColumn<int>("n_ff");
        QTest::addColumn<int>("hot");
        QTest::addColumn<bool>("gated");
        // Widths below, at and above a warp of 32-element blocks; hot counts that are not
        // multiples of 256 (PowerInfer's Q4_0 kernel drops the remainder) or of a block of rows.
        const int shapes[][3] = {{32, 40, 1}, {96, 300, 257}, {160, 700, 511}, {1024, 2000, 1300}};
        add_device_rows([&](const QString& device) {
            for (DType t : kTypes)
                for (const auto& s : shapes)
                    for (bool gated : {true, false})
                        QTest::addRow("%s %s %dx%d hot %d%s", qPrintable(device), ember::tensor::dtype_name(t), s[0], s[1],
                                      s[2], gated ? " gated" : "")
                            << device << int(t) << s[0] << s[1] << s[2] << gated;
        });
    }

    void ops_match_the_cpu() {
        QFETCH(QString, device);
        QFETCH(int, type);
        QFETCH(int, n_embd);
        QFETCH(int, n_ff);
        QFETCH(int, hot);
        QFETCH(bool, gated);
        const DType t = DType(type);
        const Layer layer(t, n_embd, n_ff, gated, uint32_t(n_embd * 7 + n_ff));
        const ember::backend::FfnRows rows = layer.rows();
        auto dev = open_device(device, 1ull << 30);
        QVERIFY(dev->supports(t));
        const std::vector<int32_t> resident = pick(n_ff, hot, 1);
        dev->set_hot_neurons(0, rows, resident);

        // Dots over the active subset of the resident neurons, in a shuffled order.
        std::vector<int32_t> active = pick(hot, std::max(1, hot * 3 / 4), 2);
        for (auto& a : active) a = resident[size_t(a)];
        std::shuffle(active.begin(), active.end(), std::mt19937(3));
        const std::vector<float> x = random_vector(size_t(n_embd), 4);
        ember::tensor::PreparedActivations prepared;
        prepared.reserve(1, n_embd);
        prepared.prepare(t, x.data(), 1, n_embd);
        std::vector<float> g(active.size(), NAN), v(active.size(), NAN);
        dev->begin_dots(0, prepared.row(0), active, g.data(), v.data());
        dev->wait();
        for (size_t j = 0; j < active.size(); ++j) {
            QVERIFY(close_to_cpu(rows.up, active[j], prepared.row(0), v[j]));
            if (gated) QVERIFY(close_to_cpu(rows.gate, active[j], prepared.row(0), g[j]));
        }

        // The down-projection: ReLU-like coefficients, a third of them zero.
        std::vector<float> coef = random_vector(active.size(), 5);
        for (size_t j = 0; j < coef.size(); j += 3) coef[j] = 0.0f;
        std::vector<float> y(size_t(n_embd), NAN), want(size_t(n_embd), 0.0f), magnitude(size_t(n_embd), 0.0f);
        std::vector<float> w(static_cast<size_t>(n_embd));
        dev->begin_down(0, active, coef.data(), y.data());
        dev->wait();
        for (size_t j = 0; j < active.size(); ++j) {
            ember::tensor::axpy_row(t, n_embd, coef[j], rows.down_t.row(active[j]), want.data());
            ember::tensor::dequantize_row(t, rows.down_t.row(active[j]), w.data(), n_embd);
            for (int i = 0; i < n_embd; ++i) magnitude[size_t(i)] += std::fabs(coef[j] * w[size_t(i)]);
        }
        for (int i = 0; i < n_embd; ++i)
            if (!(std::fabs(y[size_t(i)] - want[size_t(i)]) <= kRelativeError * magnitude[size_t(i)] + 1e-6f))
                QFAIL(qPrintable(QStringLiteral("down output %1: %2, the CPU says %3").arg(i).arg(y[size_t(i)]).arg(want[size_t(i)])));

        // Deterministic: the same inputs give the same bits.
        std::vector<float> again(static_cast<size_t>(n_embd));
        dev->begin_down(0, active, coef.data(), again.data());
        dev->wait();
        QVERIFY(std::memcmp(again.data(), y.data(), y.size() * sizeof(float)) == 0);
    }

    void dense_products_match_the_cpu_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("n_cols");
        QTest::addColumn<int>("n_rows");
        QTest::addColumn<int>("n_tokens");
        // Row counts that fill no whole block of rows; batches of one token and of several.
        const int shapes[][3] = {{32, 7, 1}, {96, 333, 3}, {1024, 2049, 1}, {160, 5000, 2}};
        add_device_rows([&](const QString& device) {
            for (DType t : kTypes)
                for (const auto& s : shapes)
                    QTest::addRow("%s %s %dx%d, %d tokens", qPrintable(device), ember::tensor::dtype_name(t), s[0], s[1], s[2])
                        << device << int(t) << s[0] << s[1] << s[2];
        });
    }

    void dense_products_match_the_cpu() {
        QFETCH(QString, device);
        QFETCH(int, type);
        QFETCH(int, n_cols);
        QFETCH(int, n_rows);
        QFETCH(int, n_tokens);
        const DType t = DType(type);
        const Matrix m(t, n_cols, n_rows, uint32_t(n_cols + n_rows));
        auto dev = open_device(device, 1ull << 30);
        dev->set_dense(std::span(&m.view, 1), 0);
        QVERIFY(dev->holds(m.view));
        QCOMPARE(dev->traffic().dense_bytes_uploaded, m.bytes());

        const std::vector<float> x = random_vector(size_t(n_cols) * size_t(n_tokens), 11);
        ember::tensor::PreparedActivations prepared;
        prepared.reserve(n_tokens, n_cols);
        prepared.prepare(t, x.data(), n_tokens, n_cols);
        std::vector<float> y(size_t(n_rows) * size_t(n_tokens), NAN);
        dev->begin_matmul(m.view, prepared.row(0), prepared.row_stride(), n_tokens, y.data());
        dev->wait();
        for (int tok = 0; tok < n_tokens; ++tok)
            for (int r = 0; r < n_rows; ++r)
                QVERIFY(close_to_cpu(m.view, r, prepared.row(tok), y[size_t(tok) * size_t(n_rows) + size_t(r)]));
        QCOMPARE(dev->traffic().matmuls, uint64_t(1));

        std::vector<float> again(y.size());
        dev->begin_matmul(m.view, prepared.row(0), prepared.row_stride(), n_tokens, again.data());
        dev->wait();
        QVERIFY(std::memcmp(again.data(), y.data(), y.size() * sizeof(float)) == 0);
    }

    void products_queue_back_to_back_data() {
        QTest::addColumn<QString>("device");
        add_device_rows([](const QString& device) { QTest::newRow(qPrintable(device)) << device; });
    }

    // Products of one input queued together and joined by one wait(), as a layer's Q, K and V
    // are; a larger batch later makes the device's staging grow under a non-empty queue.
    void products_queue_back_to_back() {
        QFETCH(QString, device);
        const Matrix q(DType::Q4_0, 256, 300, 31), k(DType::Q8_0, 256, 70, 32), v(DType::Q4_0, 256, 70, 33);
        auto dev = open_device(device, 1ull << 30);
        const WeightView all[] = {q.view, k.view, v.view};
        dev->set_dense(all, kScratch);
        for (int n_tokens : {1, 1, 4}) {
            const std::vector<float> x = random_vector(size_t(256) * size_t(n_tokens), uint32_t(34 + n_tokens));
            ember::tensor::PreparedActivations prepared;
            prepared.reserve(n_tokens, 256);
            prepared.prepare(DType::Q4_0, x.data(), n_tokens, 256);
            std::vector<std::vector<float>> y;
            for (const WeightView& w : all) y.emplace_back(size_t(w.n_rows) * size_t(n_tokens), NAN);
            for (size_t i = 0; i < 3; ++i)
                dev->begin_matmul(all[i], prepared.row(0), prepared.row_stride(), n_tokens, y[i].data());
            dev->wait();
            for (size_t i = 0; i < 3; ++i)
                for (int t = 0; t < n_tokens; ++t)
                    for (int64_t r = 0; r < all[i].n_rows; ++r)
                        QVERIFY(close_to_cpu(all[i], int32_t(r), prepared.row(t), y[i][size_t(t) * size_t(all[i].n_rows) + size_t(r)]));
        }
        QCOMPARE(dev->traffic().matmuls, uint64_t(9));
    }

    void dense_residency_data() {
        QTest::addColumn<QString>("device");
        add_device_rows([](const QString& device) { QTest::newRow(qPrintable(device)) << device; });
    }

    void dense_residency() {
        QFETCH(QString, device);
        const Matrix a(DType::Q4_0, 256, 300, 1), b(DType::Q8_0, 256, 200, 2), c(DType::F16, 64, 100, 3);
        const Layer layer(DType::Q4_0, 128, 600, true, 9);
        const uint64_t per_neuron = 3 * ember::tensor::row_bytes(DType::Q4_0, 128);
        const uint64_t budget = a.bytes() + b.bytes() + kScratch + 100 * per_neuron;
        auto dev = open_device(device, budget);
        dev->set_hot_neurons(0, layer.rows(), pick(600, 100, 1));
        const WeightView ab[] = {a.view, b.view};
        dev->set_dense(ab, kScratch);
        QCOMPARE(dev->used_bytes(), budget);
        QCOMPARE(dev->traffic().dense_bytes_uploaded, a.bytes() + b.bytes());

        // Past the budget: refused, and nothing changed.
        const WeightView abc[] = {a.view, b.view, c.view};
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_dense(abc, kScratch));
        QCOMPARE(dev->used_bytes(), budget);
        QVERIFY(dev->holds(a.view) && dev->holds(b.view) && !dev->holds(c.view));

        // A new set: what stays is not uploaded again, what leaves frees its bytes.
        const WeightView bc[] = {b.view, c.view};
        dev->set_dense(bc, 0);
        QCOMPARE(dev->traffic().dense_bytes_uploaded, a.bytes() + b.bytes() + c.bytes());
        QCOMPARE(dev->used_bytes(), b.bytes() + c.bytes() + 100 * per_neuron);
        QVERIFY(!dev->holds(a.view));

        // A matrix that is not resident is an error, not a silent zero.
        std::vector<float> y(300);
        const std::vector<float> x = random_vector(256, 4);
        ember::tensor::PreparedActivations prepared;
        prepared.reserve(1, 256);
        prepared.prepare(DType::Q4_0, x.data(), 1, 256);
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, {
            dev->begin_matmul(a.view, prepared.row(0), prepared.row_stride(), 1, y.data());
            dev->wait();
        });
    }

    void attention_matches_the_cpu_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("n_head");
        QTest::addColumn<int>("n_head_kv");
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("n_past");
        QTest::addColumn<int>("n_tokens");
        // GQA and not; head sizes that are not powers of two; more keys than a block has threads.
        const int shapes[][5] = {{4, 4, 64, 0, 1}, {4, 2, 80, 5, 3}, {8, 1, 128, 300, 2}, {2, 2, 32, 130, 1}};
        add_device_rows([&](const QString& device) {
            for (const auto& s : shapes)
                QTest::addRow("%s heads %d/%d x %d, %d past, %d tokens", qPrintable(device), s[0], s[1], s[2], s[3], s[4])
                    << device << s[0] << s[1] << s[2] << s[3] << s[4];
        });
    }

    // Tokens appended to a cache that already holds n_past positions (moved there from the
    // host), their attention against the CPU's, then the cache moved back with every position.
    void attention_matches_the_cpu() {
        QFETCH(QString, device);
        QFETCH(int, n_head);
        QFETCH(int, n_head_kv);
        QFETCH(int, head_dim);
        QFETCH(int, n_past);
        QFETCH(int, n_tokens);
        const ember::backend::KvShape shape{2, 512, n_head, n_head_kv, head_dim};
        const size_t n_gqa = size_t(shape.n_embd_gqa()), n_embd = size_t(n_head) * size_t(head_dim);
        const size_t cache = size_t(shape.n_layer) * size_t(shape.n_ctx) * n_gqa;
        std::vector<uint16_t> host_k = random_half(cache, 21), host_v = random_half(cache, 22);
        auto dev = open_device(device, 1ull << 30);
        dev->set_kv_cache(shape, host_k.data(), host_v.data(), n_past);
        QVERIFY(dev->holds_kv_cache());
        QCOMPARE(dev->used_bytes(), shape.bytes());

        const int32_t il = 1;
        const std::vector<float> q = random_vector(size_t(n_tokens) * n_embd, 23);
        const std::vector<float> k = random_vector(size_t(n_tokens) * n_gqa, 24), v = random_vector(size_t(n_tokens) * n_gqa, 25);
        std::vector<float> out(size_t(n_tokens) * n_embd, NAN);
        dev->begin_attention(il, n_past, n_tokens, q.data(), k.data(), v.data(), out.data());
        dev->wait();

        // The CPU's answer over the same cache: the host's positions, then the new rows.
        std::vector<uint16_t> want_k = host_k, want_v = host_v;
        uint16_t* layer_k = want_k.data() + size_t(il) * size_t(shape.n_ctx) * n_gqa;
        uint16_t* layer_v = want_v.data() + size_t(il) * size_t(shape.n_ctx) * n_gqa;
        for (size_t i = 0; i < size_t(n_tokens) * n_gqa; ++i) {
            layer_k[size_t(n_past) * n_gqa + i] = ember::tensor::f32_to_fp16(k[i]);
            layer_v[size_t(n_past) * n_gqa + i] = ember::tensor::f32_to_fp16(v[i]);
        }
        std::vector<uint16_t> half(size_t(std::max(head_dim, shape.n_ctx)));
        std::vector<float> scores(static_cast<size_t>(shape.n_ctx)), want(static_cast<size_t>(head_dim));
        const float scale = 1.0f / std::sqrt(float(head_dim));
        for (int t = 0; t < n_tokens; ++t)
            for (int h = 0; h < n_head; ++h) {
                const size_t offset = size_t(h / (n_head / n_head_kv)) * size_t(head_dim);
                ember::tensor::attend_head(q.data() + size_t(t) * n_embd + size_t(h) * size_t(head_dim), layer_k + offset,
                                           layer_v + offset, n_gqa, n_past + t + 1, head_dim, scale, half.data(),
                                           scores.data(), want.data());
                // The weights sum to 1, so an output is at most the largest value (N(0, 1) values:
                // below 6); a weight rounded to F16 the other way in another summation order moves
                // it by about one F16 step (2^-11) of that.
                for (int d = 0; d < head_dim; ++d) {
                    const float got = out[size_t(t) * n_embd + size_t(h) * size_t(head_dim) + size_t(d)];
                    if (!(std::fabs(got - want[size_t(d)]) <= 6.0f / 2048))
                        QFAIL(qPrintable(QStringLiteral("token %1 head %2 element %3: %4, the CPU says %5")
                                             .arg(t).arg(h).arg(d).arg(got).arg(want[size_t(d)])));
                }
            }
        QCOMPARE(dev->traffic().attentions, uint64_t(1));

        // Leaving the device, the cache takes every valid position back to the host.
        std::vector<uint16_t> back_k(cache, 0), back_v(cache, 0);
        dev->set_kv_cache({}, back_k.data(), back_v.data(), n_past + n_tokens);
        QVERIFY(!dev->holds_kv_cache());
        QCOMPARE(dev->used_bytes(), uint64_t(0));
        // (Layer il gained the new tokens; the other layer was given no rows past n_past.)
        for (int32_t layer = 0; layer < shape.n_layer; ++layer) {
            const size_t at = size_t(layer) * size_t(shape.n_ctx) * n_gqa;
            const size_t n = size_t(n_past + (layer == il ? n_tokens : 0)) * n_gqa;
            QVERIFY(std::equal(back_k.begin() + long(at), back_k.begin() + long(at + n), want_k.begin() + long(at)));
            QVERIFY(std::equal(back_v.begin() + long(at), back_v.begin() + long(at + n), want_v.begin() + long(at)));
        }
    }

    void attention_layer_matches_the_cpu_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("type");
        QTest::addColumn<bool>("falcon");
        QTest::addColumn<int>("n_head");
        QTest::addColumn<int>("n_head_kv");
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("n_past");
        QTest::addColumn<int>("n_tokens");
        // LLaMA's (RMSNorm, Q/K/V apart, adjacent pairs, residual) and Falcon's (LayerNorm, fused
        // QKV, NeoX pairs, no residual) shapes; GQA, heads that are not powers of two, a batch.
        add_device_rows([&](const QString& device) {
            for (DType t : kTypes) {
                QTest::addRow("%s %s llama 4/4x64", qPrintable(device), ember::tensor::dtype_name(t))
                    << device << int(t) << false << 4 << 4 << 64 << 0 << 3;
                QTest::addRow("%s %s llama 6/2x48", qPrintable(device), ember::tensor::dtype_name(t))
                    << device << int(t) << false << 6 << 2 << 48 << 7 << 1;
                QTest::addRow("%s %s falcon 4/1x64", qPrintable(device), ember::tensor::dtype_name(t))
                    << device << int(t) << true << 4 << 1 << 64 << 5 << 2;
            }
        });
    }

    // Two calls (a batch, then one more token reading what the first stored) against the CPU's
    // steps: the norm, the products, RoPE, attention over the cache, the output product and the
    // residual. The sim device must match bit for bit; a GPU within rounding in its own order.
    void attention_layer_matches_the_cpu() {
        QFETCH(QString, device);
        QFETCH(int, type);
        QFETCH(bool, falcon);
        QFETCH(int, n_head);
        QFETCH(int, n_head_kv);
        QFETCH(int, head_dim);
        QFETCH(int, n_past);
        QFETCH(int, n_tokens);
        const int64_t n_embd = int64_t(n_head) * head_dim, n_gqa = int64_t(n_head_kv) * head_dim;
        const ember::backend::KvShape shape{2, 32, n_head, n_head_kv, head_dim};
        const int32_t il = 1;
        const DType dtype = DType(type);

        std::vector<Matrix> qkv_matrices;
        if (falcon) {
            qkv_matrices.emplace_back(dtype, n_embd, n_embd + 2 * n_gqa, 31);
        } else {
            qkv_matrices.emplace_back(dtype, n_embd, n_embd, 31);
            qkv_matrices.emplace_back(dtype, n_embd, n_gqa, 32);
            qkv_matrices.emplace_back(dtype, n_embd, n_gqa, 33);
        }
        const Matrix wo(dtype, n_embd, n_embd, 34);
        std::vector<WeightView> qkv, dense;
        for (const Matrix& m : qkv_matrices) qkv.push_back(m.view);
        dense = qkv;
        dense.push_back(wo.view);
        const std::vector<float> norm_w = random_vector(size_t(n_embd), 35), norm_b = random_vector(size_t(n_embd), 36);
        const ember::backend::AttentionLayer layer{{norm_w.data(), falcon ? norm_b.data() : nullptr, 1e-5f},
                                                   qkv, wo.view,
                                                   falcon ? ember::tensor::RopePairs::NeoX : ember::tensor::RopePairs::Adjacent,
                                                   !falcon};

        const size_t cache = size_t(shape.n_layer) * size_t(shape.n_ctx) * size_t(n_gqa);
        std::vector<uint16_t> host_k = random_half(cache, 37), host_v = random_half(cache, 38);
        auto dev = open_device(device, 1ull << 30);
        dev->set_dense(dense, kScratch);
        dev->set_kv_cache(shape, host_k.data(), host_v.data(), n_past);

        // The CPU's answer, step by step, over its own copy of the cache.
        ember::tensor::ThreadPool pool(1);
        ember::tensor::PreparedActivations prepared;
        std::vector<uint16_t> half(size_t(std::max(head_dim, shape.n_ctx)));
        std::vector<float> scores(size_t(shape.n_ctx));
        const float scale = 1.0f / std::sqrt(float(head_dim));
        auto cpu = [&](const std::vector<float>& x, int pos0, int n, const std::vector<float>& angles) {
            std::vector<float> xn(x.size()), q(size_t(n) * size_t(n_embd)), k(size_t(n) * size_t(n_gqa)), v(k.size());
            if (falcon)
                ember::tensor::layer_norm(x.data(), norm_w.data(), norm_b.data(), xn.data(), n_embd, n, 1e-5f);
            else
                ember::tensor::rms_norm(x.data(), norm_w.data(), xn.data(), n_embd, n, 1e-5f);
            if (falcon) {
                std::vector<float> fused(size_t(n) * size_t(n_embd + 2 * n_gqa));
                ember::tensor::matmul(pool, qkv[0], xn.data(), n, fused.data(), prepared);
                for (int t = 0; t < n; ++t) {
                    const float* row = fused.data() + size_t(t) * size_t(n_embd + 2 * n_gqa);
                    std::copy(row, row + n_embd, q.data() + size_t(t) * size_t(n_embd));
                    std::copy(row + n_embd, row + n_embd + n_gqa, k.data() + size_t(t) * size_t(n_gqa));
                    std::copy(row + n_embd + n_gqa, row + n_embd + 2 * n_gqa, v.data() + size_t(t) * size_t(n_gqa));
                }
            } else {
                ember::tensor::matmul(pool, qkv[0], xn.data(), n, q.data(), prepared);
                ember::tensor::matmul(pool, qkv[1], xn.data(), n, k.data(), prepared);
                ember::tensor::matmul(pool, qkv[2], xn.data(), n, v.data(), prepared);
            }
            uint16_t* layer_k = host_k.data() + size_t(il) * size_t(shape.n_ctx) * size_t(n_gqa);
            uint16_t* layer_v = host_v.data() + size_t(il) * size_t(shape.n_ctx) * size_t(n_gqa);
            for (int t = 0; t < n; ++t) {
                ember::tensor::rope_rotate(q.data() + size_t(t) * size_t(n_embd), n_head, head_dim,
                                           angles.data() + size_t(t) * size_t(head_dim), layer.pairs);
                ember::tensor::rope_rotate(k.data() + size_t(t) * size_t(n_gqa), n_head_kv, head_dim,
                                           angles.data() + size_t(t) * size_t(head_dim), layer.pairs);
                for (int64_t i = 0; i < n_gqa; ++i) {
                    layer_k[size_t(pos0 + t) * size_t(n_gqa) + size_t(i)] = ember::tensor::f32_to_fp16(k[size_t(t * n_gqa + i)]);
                    layer_v[size_t(pos0 + t) * size_t(n_gqa) + size_t(i)] = ember::tensor::f32_to_fp16(v[size_t(t * n_gqa + i)]);
                }
            }
            std::vector<float> attn(q.size()), y(q.size());
            for (int t = 0; t < n; ++t)
                for (int h = 0; h < n_head; ++h) {
                    const size_t offset = size_t(h / (n_head / n_head_kv)) * size_t(head_dim);
                    const size_t at = size_t(t) * size_t(n_embd) + size_t(h) * size_t(head_dim);
                    ember::tensor::attend_head(q.data() + at, layer_k + offset, layer_v + offset, size_t(n_gqa),
                                               pos0 + t + 1, head_dim, scale, half.data(), scores.data(), attn.data() + at);
                }
            ember::tensor::matmul(pool, wo.view, attn.data(), n, y.data(), prepared);
            if (!falcon)
                for (size_t i = 0; i < y.size(); ++i) y[i] = x[i] + y[i];
            return y;
        };

        int pos0 = n_past;
        for (const int n : {n_tokens, 1}) {
            std::vector<float> angles(size_t(n) * size_t(head_dim));
            for (int t = 0; t < n; ++t)
                ember::tensor::rope_angles(pos0 + t, head_dim, 10000.0f, 1.0f, nullptr, angles.data() + size_t(t) * size_t(head_dim));
            const std::vector<float> x = random_vector(size_t(n) * size_t(n_embd), uint32_t(40 + pos0));
            std::vector<float> got = x;  // computed in place
            dev->begin_attention_layer(il, layer, pos0, n, angles.data(), got.data(), got.data());
            dev->wait();
            const std::vector<float> want = cpu(x, pos0, n, angles);
            if (device == "sim") {
                QVERIFY(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
            } else {
                // The products read activations quantized from intermediates computed in another
                // order; a value that rounds the other way moves a result by one quantization
                // step of one term. The bound: 1 % of the sub-layer's RMS output.
                double sum2 = 0;
                for (size_t i = 0; i < want.size(); ++i) {
                    const double r = want[i] - (falcon ? 0.0f : x[i]);
                    sum2 += r * r;
                }
                const double bound = 0.01 * std::sqrt(sum2 / double(want.size()));
                for (size_t i = 0; i < want.size(); ++i)
                    if (!(std::fabs(double(got[i]) - double(want[i])) <= bound))
                        QFAIL(qPrintable(QStringLiteral("value %1 at position %2: %3, the CPU says %4 (bound %5)")
                                             .arg(i).arg(pos0).arg(got[i]).arg(want[i]).arg(bound)));
            }
            pos0 += n;
        }
        QCOMPARE(dev->traffic().attention_sublayers, uint64_t(2));
    }

    void predictor_matches_the_cpu_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<int>("type");
        QTest::addColumn<int>("rank");
        add_device_rows([&](const QString& device) {
            for (DType t : kTypes)
                for (int rank : {32, 96})
                    QTest::addRow("%s %s rank %d", qPrintable(device), ember::tensor::dtype_name(t), rank)
                        << device << int(t) << rank;
        });
    }

    // scores = fc2 · ReLU(fc1 · u) for two tokens, against the CPU's products: bit for bit on the
    // sim device, within rounding in another order on a GPU.
    void predictor_matches_the_cpu() {
        QFETCH(QString, device);
        QFETCH(int, type);
        QFETCH(int, rank);
        const int64_t n_embd = 128, n_ff = 333;
        const int32_t n_tokens = 2;
        const Matrix fc1(DType(type), n_embd, rank, 51), fc2(DType(type), rank, n_ff, 52);
        auto dev = open_device(device, 1ull << 30);
        const WeightView dense[] = {fc1.view, fc2.view};
        dev->set_dense(dense, kScratch);
        const std::vector<float> u = random_vector(size_t(n_tokens) * size_t(n_embd), 53);
        std::vector<float> got(size_t(n_tokens) * size_t(n_ff), NAN);
        dev->begin_predictor(fc1.view, fc2.view, u.data(), n_tokens, got.data());
        dev->wait();

        ember::tensor::ThreadPool pool(1);
        ember::tensor::PreparedActivations prepared;
        std::vector<float> h(size_t(n_tokens) * size_t(rank)), want(got.size());
        ember::tensor::matmul(pool, fc1.view, u.data(), n_tokens, h.data(), prepared);
        for (float& v : h) v = std::max(v, 0.0f);
        ember::tensor::matmul(pool, fc2.view, h.data(), n_tokens, want.data(), prepared);
        if (device == "sim") {
            QVERIFY(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)) == 0);
        } else {
            // A hidden value quantized the other way moves a score by one step of one term: the
            // bound is 1 % of the scores' RMS.
            double sum2 = 0;
            for (float w : want) sum2 += double(w) * double(w);
            const double bound = 0.01 * std::sqrt(sum2 / double(want.size()));
            for (size_t i = 0; i < want.size(); ++i)
                if (!(std::fabs(double(got[i]) - double(want[i])) <= bound))
                    QFAIL(qPrintable(QStringLiteral("score %1: %2, the CPU says %3 (bound %4)").arg(i).arg(got[i]).arg(want[i]).arg(bound)));
        }
        QCOMPARE(dev->traffic().predictors, uint64_t(1));
        QCOMPARE(dev->traffic().joins, uint64_t(1));

        const Matrix other(DType(type), n_embd, rank, 54);
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->begin_predictor(other.view, fc2.view, u.data(), 1, got.data()));
    }

    void memory_checks_are_the_same_on_every_device_data() {
        QTest::addColumn<QString>("device");
        add_device_rows([](const QString& device) { QTest::newRow(qPrintable(device)) << device; });
    }

    // Every device counts and bounds what it holds the same way (DeviceMemory): each kind in
    // usage(), and a refusal changes nothing.
    void memory_checks_are_the_same_on_every_device() {
        QFETCH(QString, device);
        const Layer layer(DType::Q8_0, 128, 300, true, 21);
        const ember::backend::FfnRows rows = layer.rows();
        const uint64_t per_neuron = 3 * ember::tensor::row_bytes(DType::Q8_0, 128);
        const Matrix m(DType::Q4_0, 128, 64, 22);
        const ember::backend::KvShape shape{1, 16, 2, 2, 64};
        const uint64_t budget = kScratch + m.bytes() + shape.bytes() + 100 * per_neuron;
        auto dev = open_device(device, budget);
        dev->set_dense(std::span(&m.view, 1), kScratch);
        dev->set_hot_neurons(0, rows, pick(300, 100, 23));
        std::vector<uint16_t> host_k(size_t(shape.bytes() / 4)), host_v(host_k.size());
        dev->set_kv_cache(shape, host_k.data(), host_v.data(), 0);
        const ember::backend::DeviceUsage held = dev->usage();
        QCOMPARE(held.dense, kScratch + m.bytes());
        QCOMPARE(held.ffn, 100 * per_neuron);
        QCOMPARE(held.kv, shape.bytes());
        QCOMPARE(held.total(), budget);

        const std::vector<int32_t> descending{5, 3}, outside{299, 300};
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_hot_neurons(0, rows, descending));
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_hot_neurons(0, rows, outside));
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_hot_neurons(1, rows, pick(300, 1, 24)));
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_dense(std::span(&m.view, 1), kScratch + 1));
        const ember::backend::KvShape longer{1, 17, 2, 2, 64};
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_kv_cache(longer, host_k.data(), host_v.data(), 0));
        QCOMPARE(dev->usage().total(), budget);
        QVERIFY(dev->holds(m.view) && dev->holds_kv_cache());

        // Everything leaves: only the reserve stays, and the footprint can shrink to it.
        dev->set_kv_cache({}, host_k.data(), host_v.data(), 0);
        dev->set_hot_neurons(0, rows, {});
        dev->set_dense({}, kScratch);
        QCOMPARE(dev->used_bytes(), kScratch);
        QVERIFY(!dev->holds(m.view) && !dev->holds_kv_cache());
        dev->set_footprint(kScratch);
        QCOMPARE(dev->footprint(), kScratch);
    }

    void replan_moves_only_changed_rows_data() {
        QTest::addColumn<QString>("device");
        add_device_rows([](const QString& device) { QTest::newRow(qPrintable(device)) << device; });
    }

    void replan_moves_only_changed_rows() {
        QFETCH(QString, device);
        const Layer layer(DType::Q4_0, 128, 600, true, 9);
        const ember::backend::FfnRows rows = layer.rows();
        const uint64_t per_neuron = 3 * ember::tensor::row_bytes(DType::Q4_0, 128);
        auto dev = open_device(device, kScratch + 400 * per_neuron);
        dev->set_dense({}, kScratch);
        const std::vector<int32_t> first = pick(600, 300, 1);
        dev->set_hot_neurons(3, rows, first);
        QCOMPARE(dev->traffic().bytes_uploaded, 300 * per_neuron);
        QCOMPARE(dev->used_bytes(), kScratch + 300 * per_neuron);

        // 100 leave, 150 arrive: only the arrivals are uploaded.
        std::vector<int32_t> next(first.begin() + 100, first.end());
        std::vector<int32_t> arrivals;
        for (int32_t id = 0; id < 600 && arrivals.size() < 150; ++id)
            if (!std::binary_search(first.begin(), first.end(), id)) arrivals.push_back(id);
        next.insert(next.end(), arrivals.begin(), arrivals.end());
        std::sort(next.begin(), next.end());
        dev->set_hot_neurons(3, rows, next);
        QCOMPARE(dev->traffic().bytes_uploaded, 450 * per_neuron);
        QCOMPARE(dev->used_bytes(), kScratch + 350 * per_neuron);

        // Past the budget: refused, nothing changed, and the resident rows still compute right.
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_hot_neurons(3, rows, pick(600, 401, 7)));
        QCOMPARE(dev->used_bytes(), kScratch + 350 * per_neuron);
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_budget_bytes(kScratch + 349 * per_neuron));
        const std::vector<float> x = random_vector(128, 4);
        ember::tensor::PreparedActivations prepared;
        prepared.reserve(1, 128);
        prepared.prepare(DType::Q4_0, x.data(), 1, 128);
        std::vector<float> g(next.size()), v(next.size());
        dev->begin_dots(3, prepared.row(0), next, g.data(), v.data());
        dev->wait();
        for (size_t j = 0; j < next.size(); ++j) {
            QVERIFY(close_to_cpu(rows.up, next[j], prepared.row(0), v[j]));
            QVERIFY(close_to_cpu(rows.gate, next[j], prepared.row(0), g[j]));
        }
        // A neuron that is not resident is an error, not a silent zero.
        int32_t absent = 0;
        while (std::binary_search(next.begin(), next.end(), absent)) ++absent;
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, {
            dev->begin_dots(3, prepared.row(0), std::span<const int32_t>(&absent, 1), g.data(), v.data());
            dev->wait();
        });
    }

    void footprint_changes_keep_what_is_held_data() {
        QTest::addColumn<QString>("device");
        add_device_rows([](const QString& device) { QTest::newRow(qPrintable(device)) << device; });
    }

    // The memory held follows the placement both ways (a GPU replaces its one allocation), and
    // the rows and matrices in it keep computing right.
    void footprint_changes_keep_what_is_held() {
        QFETCH(QString, device);
        const Layer layer(DType::Q8_0, 256, 700, true, 12);
        const ember::backend::FfnRows rows = layer.rows();
        const Matrix m(DType::F16, 256, 90, 13);
        const uint64_t per_neuron = 3 * ember::tensor::row_bytes(DType::Q8_0, 256);
        const uint64_t budget = kScratch + m.bytes() + 500 * per_neuron;
        auto dev = open_device(device, budget);
        dev->set_dense(std::span(&m.view, 1), kScratch);
        dev->set_hot_neurons(0, rows, pick(700, 500, 2));

        // Shrink the hot set, then the memory to exactly what is in use.
        const std::vector<int32_t> fewer = pick(700, 150, 3);
        dev->set_hot_neurons(0, rows, fewer);
        const uint64_t in_use = kScratch + m.bytes() + 150 * per_neuron;
        QCOMPARE(dev->used_bytes(), in_use);
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_footprint(in_use - 1));
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_footprint(budget + 1));
        dev->set_footprint(in_use);
        QCOMPARE(dev->footprint(), in_use);
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_budget_bytes(in_use - 1));
        QVERIFY_THROWS_EXCEPTION(ember::EngineError, dev->set_hot_neurons(0, rows, pick(700, 151, 4)));

        auto check_layer = [&](const std::vector<int32_t>& ids) {
            const std::vector<float> x = random_vector(256, 5);
            ember::tensor::PreparedActivations prepared;
            prepared.reserve(1, 256);
            prepared.prepare(DType::Q8_0, x.data(), 1, 256);
            std::vector<float> g(ids.size(), NAN), v(ids.size(), NAN);
            dev->begin_dots(0, prepared.row(0), ids, g.data(), v.data());
            dev->wait();
            for (size_t j = 0; j < ids.size(); ++j)
                if (!close_to_cpu(rows.up, ids[j], prepared.row(0), v[j]) || !close_to_cpu(rows.gate, ids[j], prepared.row(0), g[j]))
                    return false;
            std::vector<float> y(90, NAN);
            const std::vector<float> xm = random_vector(256, 6);
            ember::tensor::PreparedActivations pm;
            pm.reserve(1, 256);
            pm.prepare(DType::F16, xm.data(), 1, 256);
            dev->begin_matmul(m.view, pm.row(0), pm.row_stride(), 1, y.data());
            dev->wait();
            for (int r = 0; r < 90; ++r)
                if (!close_to_cpu(m.view, r, pm.row(0), y[size_t(r)])) return false;
            return true;
        };
        QVERIFY(check_layer(fewer));

        // Grow again: the memory first, then the rows; only the new rows are uploaded.
        const uint64_t uploaded = dev->traffic().bytes_uploaded;
        dev->set_footprint(budget);
        const std::vector<int32_t> more = pick(700, 480, 7);
        dev->set_hot_neurons(0, rows, more);
        size_t arrivals = 0;
        for (int32_t id : more) arrivals += !std::binary_search(fewer.begin(), fewer.end(), id);
        QCOMPARE(dev->traffic().bytes_uploaded, uploaded + arrivals * per_neuron);
        QVERIFY(check_layer(more));
        QCOMPARE(dev->traffic().dense_bytes_uploaded, m.bytes());
    }
};

QTEST_GUILESS_MAIN(TestBackendOps)
#include "tst_backend_ops.moc"

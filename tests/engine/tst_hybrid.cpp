// Hybrid execution on the `sim` device: hot neurons chosen from the activation statistics for a
// byte budget run on the device, cold ones on the CPU. The text must not depend on the split,
// the device must stay within its budget, and a re-plan moves only the neurons that change side.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "engine_test_helpers.h"
#include "ember/gpu.h"
#include "ember/model.h"
#include "ember/session.h"
#include "sparse/activation_file.h"
#include "sparse/sparsity_file.h"

namespace {

const QString kData = QStringLiteral(EMBER_TEST_DATA_DIR) + "/tiny-relu-llama";
const char* kPrompts[] = {"And it came to pass", "The LORD is my shepherd"};

std::unique_ptr<ember::Session> sim_session(std::shared_ptr<ember::Model> m, uint64_t budget, bool reset = false,
                                            bool disable = false, const std::string& device = "sim") {
    ember::SessionParams sp;
    sp.n_ctx = 256;
    sp.n_threads = 2;
    sp.device = device;
    sp.device_budget_bytes = budget;
    sp.reset_gpu_index = reset;
    sp.disable_gpu_index = disable;
    auto s = ember::Session::create(std::move(m), sp);
    if (!s) qFatal("%s", s.error().message.c_str());
    return std::move(*s);
}

std::string greedy_text(ember::Session& s, const ember::Model& m, const char* prompt) {
    s.clear();
    std::string text;
    auto r = s.generate(m.tokenize(prompt, true), test_helpers::greedy(24), [&](const ember::TokenEvent& ev) {
        text += ev.text;
        return true;
    });
    if (!r) qFatal("%s", r.error().message.c_str());
    return text;
}

// A GPU sums its products in another order than the CPU, and an intermediate it quantizes may
// round the other way; random models amplify that (llama.cpp's own log-probabilities move by
// 0.08 when it turns on flash attention), and their greedy text can part at a near tie.
// Teacher-forced on the CPU's greedy tokens, the logits at every step must stay within 10 % of
// their RMS of the CPU's (a misread weight moves them by whole units), and the device must pick
// the CPU's token unless the CPU's best two lie within twice the difference seen at that step.
// Returns the largest difference; an empty string or what went wrong.
QString expect_cpu_choices(ember::Session& cpu, ember::Session& dev, const ember::Model& m, const char* prompt,
                           double* worst) {
    cpu.clear();
    dev.clear();
    std::vector<int32_t> next = m.tokenize(prompt, true);
    *worst = 0.0;
    for (int step = 0; step < 24; ++step) {
        if (!cpu.evaluate(next) || !dev.evaluate(next)) return "evaluation failed";
        const std::span<const float> a = cpu.logits(), b = dev.logits();
        double diff = 0.0, sum2 = 0.0;
        for (size_t i = 0; i < a.size(); ++i) {
            diff = std::max(diff, double(std::fabs(a[i] - b[i])));
            sum2 += double(a[i]) * double(a[i]);
        }
        *worst = std::max(*worst, diff);
        const double bound = 0.1 * std::sqrt(sum2 / double(a.size()));
        if (diff > bound) return QString("step %1: logits differ by %2, over %3").arg(step).arg(diff).arg(bound);
        const size_t best = size_t(std::max_element(a.begin(), a.end()) - a.begin());
        const size_t chosen = size_t(std::max_element(b.begin(), b.end()) - b.begin());
        if (chosen != best && double(a[best] - a[chosen]) > 2 * diff)
            return QString("step %1: the device chose %2, the CPU %3 by %4").arg(step).arg(chosen).arg(best).arg(a[best] - a[chosen]);
        next = {int32_t(best)};
    }
    return {};
}

int64_t set_difference_size(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    std::vector<int32_t> d;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(d));
    return int64_t(d.size());
}

}  // namespace

class TestHybrid : public QObject {
    Q_OBJECT

private:
    // A copy of the model and its activation/ folder: sessions write the .gpuidx cache next to
    // the model, which must not land in the source tree.
    QTemporaryDir dir_;
    QString kModel;

private slots:
    void initTestCase() {
        namespace fs = std::filesystem;
        const fs::path root = dir_.path().toStdString();
        fs::copy_file((kData + "/model.q4_0.powerinfer.gguf").toStdString(), root / "model.q4_0.powerinfer.gguf");
        fs::copy((kData + "/activation").toStdString(), root / "activation");
        kModel = QString::fromStdString((root / "model.q4_0.powerinfer.gguf").string());
    }

    void gpu_index_is_cached_and_reused() {
        auto model = test_helpers::load_model(kModel);
        const std::string index = kModel.toStdString() + ".generated.gpuidx";
        std::filesystem::remove(index);
        auto first = sim_session(model, 6u << 20);
        QVERIFY2(QString::fromStdString(first->device_report().gpu_index).startsWith("wrote"),
                 first->device_report().gpu_index.c_str());
        QVERIFY(std::filesystem::exists(index));
        const auto hot = first->hot_neurons();
        auto again = sim_session(model, 6u << 20);
        QVERIFY2(QString::fromStdString(again->device_report().gpu_index).startsWith("reused"),
                 again->device_report().gpu_index.c_str());
        QCOMPARE(again->hot_neurons(), hot);
        auto other_budget = sim_session(model, 5u << 20);
        QVERIFY(QString::fromStdString(other_budget->device_report().gpu_index).startsWith("wrote"));
        auto reset = sim_session(model, 5u << 20, true);
        QVERIFY(QString::fromStdString(reset->device_report().gpu_index).startsWith("wrote"));
        auto disabled = sim_session(model, 6u << 20, false, true);
        QCOMPARE(disabled->device_report().hot_neurons, int64_t(0));
        QVERIFY(disabled->device_report().used_bytes > 0);  // dense parts are still placed
        QVERIFY(QString::fromStdString(disabled->device_report().note).contains("disabled"));
    }

    // On the sim device (the CPU's text, bit for bit) and on every usable GPU (the CPU's choices,
    // expect_cpu_choices): the whole-model check of the GPU backends.
    void text_does_not_depend_on_the_budget_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("name");
        QTest::newRow("sim") << "sim" << "sim";
        for (const ember::GpuInfo& g : ember::probe_gpus().gpus)
            if (g.unusable.empty())
                QTest::addRow("gpu:%d", g.index) << QStringLiteral("gpu:%1").arg(g.index) << QString::fromStdString(g.name);
    }

    void text_does_not_depend_on_the_budget() {
        QFETCH(QString, device);
        QFETCH(QString, name);
        const std::string dev = device.toStdString();
        auto model = test_helpers::load_model(kModel);
        auto cpu = test_helpers::open_session(model, 64, 2);
        std::vector<std::string> expected;
        for (const char* p : kPrompts) expected.push_back(greedy_text(*cpu, *model, p));

        const uint64_t everything = sim_session(model, uint64_t(1) << 30, false, false, dev)->device_report().used_bytes;
        QVERIFY(everything > 0);
        int64_t hot_at_largest = -1;
        for (double share : {0.0, 0.5, 0.7, 0.85, 1.0, 2.0}) {
            const uint64_t budget = uint64_t(double(everything) * share);
            auto s = sim_session(model, budget, false, false, dev);
            for (size_t i = 0; i < std::size(kPrompts); ++i) {
                if (dev == "sim") {
                    QCOMPARE(greedy_text(*s, *model, kPrompts[i]), expected[i]);
                    continue;
                }
                double worst = 0.0;
                const QString failure = expect_cpu_choices(*cpu, *s, *model, kPrompts[i], &worst);
                QVERIFY2(failure.isEmpty(), qPrintable(failure));
            }
            const ember::DeviceReport r = s->device_report();
            QCOMPARE(QString::fromStdString(r.device), name);
            QVERIFY2(r.used_bytes <= budget, qPrintable(QString("used %1 of %2").arg(r.used_bytes).arg(budget)));
            // (Not monotonic: once the KV cache fits it is placed before FFN rows, PowerInfer's order.)
            hot_at_largest = r.hot_neurons;
            // Dense matrices run where they were placed: nowhere on the device at budget 0,
            // all of them (attention, predictors, LM head) once everything fits.
            if (share == 0.0) {
                QCOMPARE(r.dense_products, uint64_t(0));
                QCOMPARE(r.attention_layers, uint64_t(0));
            }
            if (share >= 1.0) {
                QVERIFY2(QString::fromStdString(r.dense).contains("the LM head, the KV cache"), r.dense.c_str());
                QVERIFY(r.dense_bytes_uploaded > 0);
                QVERIFY(r.dense_products > 0);
                QVERIFY(r.attention_layers > 0);
                // With the matrices and the cache there, each layer's attention is one round trip.
                QCOMPARE(r.attention_sublayers, r.attention_layers);
                QVERIFY(r.kv_bytes > 0);
            }
            QCOMPARE(r.dense_bytes + r.kv_bytes + r.ffn_bytes, r.used_bytes);
            QCOMPARE(r.ffn_bytes, uint64_t(r.hot_neurons) * 3 * uint64_t(model->info().n_embd) / 32 * 18);
            int64_t on_device = 0;
            uint64_t device_bytes = 0;
            for (const auto& l : s->layer_sparsity()) {
                on_device += l.active_on_device;
                device_bytes += l.bytes_read_on_device;
                QVERIFY(l.bytes_read_on_device <= l.bytes_read);
            }
            QCOMPARE(on_device > 0, r.hot_neurons > 0);
            // Each neuron computed on the device read its gate, up and down_t rows there.
            const auto& info = model->info();
            const uint64_t neuron_bytes = 3 * uint64_t(info.n_embd) / 32 * 18;  // Q4_0 rows
            QCOMPARE(device_bytes, uint64_t(on_device) * neuron_bytes);
            qInfo("budget %.0f %%: %lld hot neurons, %llu of %llu bytes used; %s%s%s", 100 * share,
                  (long long)r.hot_neurons, (unsigned long long)r.used_bytes, (unsigned long long)budget,
                  r.dense.c_str(), r.note.empty() ? "" : "; ", r.note.c_str());
        }
        QCOMPARE(hot_at_largest, int64_t(model->info().n_layer) * model->info().n_ff);
    }

    // A dense ReLU model run gate first (activation sparsity whose thresholds are all 0: exactly
    // its ReGLU, zeros skipped), with PowerInfer's statistics as the calibration's firing
    // frequencies: the device holds the hot neurons' up and down rows only (the CPU computes the
    // whole gate, which decides), and the text is the CPU's at every budget.
    void gate_first_model_on_the_device_data() { text_does_not_depend_on_the_budget_data(); }
    void gate_first_model_on_the_device() {
        QFETCH(QString, device);
        QFETCH(QString, name);
        namespace fs = std::filesystem;
        const fs::path path = fs::path(dir_.path().toStdString()) / "gate-first.gguf";
        if (!fs::exists(path)) fs::copy_file((kData + "/model.dense.q4_0.gguf").toStdString(), path);
        const int32_t n_layer = 6, n_ff = 1024;
        ember::sparse::SparsityCalibration c;
        c.model_bytes = fs::file_size(path);
        c.n_tokens = 1;
        c.activation = "relu";
        c.levels = ember::sparse::default_sparsity_levels();
        const auto counts = ember::sparse::read_activation_dir((kData + "/activation").toStdString(), n_layer, n_ff);
        for (int32_t il = 0; il < n_layer; ++il) {
            auto& layer = c.layers.emplace_back();
            for (auto& t : layer.thresholds) t.assign(c.levels.size(), 0.0f);
            const double top = *std::max_element(counts[size_t(il)].begin(), counts[size_t(il)].end());
            std::vector<float> firing;
            for (double v : counts[size_t(il)]) firing.push_back(float(v / top));
            layer.firing.assign(c.levels.size(), firing);
        }
        ember::sparse::write_sparsity_file(ember::sparse::default_sparsity_path(path.string()), c);
        ember::ModelParams mp;
        mp.ffn_activation = ember::FfnActivation::Relu;
        mp.activation_sparsity = 0.5f;
        auto model = test_helpers::load_model(QString::fromStdString(path.string()), mp);
        QCOMPARE(model->info().activation_sparsity, 0.5f);
        auto cpu = test_helpers::open_session(model, 64, 2);
        std::vector<std::string> expected;
        for (const char* p : kPrompts) expected.push_back(greedy_text(*cpu, *model, p));
        const uint64_t row_bytes = uint64_t(model->info().n_embd) / 32 * 18;  // a Q4_0 row
        for (double share : {0.0, 0.5, 1.0, 2.0}) {
            const uint64_t budget = uint64_t(double(model->info().weight_bytes) * share);
            auto s = sim_session(model, budget, true, false, device.toStdString());
            for (size_t i = 0; i < std::size(kPrompts); ++i) QCOMPARE(greedy_text(*s, *model, kPrompts[i]), expected[i]);
            const ember::DeviceReport r = s->device_report();
            QCOMPARE(QString::fromStdString(r.device), name);
            QVERIFY(r.used_bytes <= budget);
            QCOMPARE(r.ffn_bytes, uint64_t(r.hot_neurons) * 2 * row_bytes);
            if (share == 2.0) QCOMPARE(r.hot_neurons, int64_t(n_layer) * n_ff);
            if (share == 0.0) QCOMPARE(r.hot_neurons, int64_t(0));
            qInfo("budget %.0f %% of the weights: %lld hot neurons", 100 * share, (long long)r.hot_neurons);
        }
    }

    void a_token_costs_four_round_trips_per_layer_data() { text_does_not_depend_on_the_budget_data(); }

    // With everything on the device, one token's forward waits for it once per layer for the
    // attention sub-layer, once for the predictor, once each for the hot FFN's two halves (when
    // the layer has active neurons), and once for the LM head.
    void a_token_costs_four_round_trips_per_layer() {
        QFETCH(QString, device);
        auto model = test_helpers::load_model(kModel);
        const int32_t n_layer = model->info().n_layer;
        const std::vector<int32_t> prompt = model->tokenize(kPrompts[0], true);
        auto round_trips = [&](int32_t n_predict) {
            auto s = sim_session(model, uint64_t(1) << 30, false, false, device.toStdString());
            auto r = s->generate(prompt, test_helpers::greedy(n_predict));
            if (!r) qFatal("%s", r.error().message.c_str());
            const ember::DeviceReport report = s->device_report();
            if (report.predictors == 0 || report.attention_sublayers == 0) qFatal("the device ran no predictor or sub-layer");
            return report.round_trips;
        };
        // Two tokens take one more single-token forward than one token.
        const uint64_t one_token = round_trips(2) - round_trips(1);
        qInfo("%llu round trips for a token of %d layers", (unsigned long long)one_token, n_layer);
        QVERIFY(one_token >= uint64_t(2 * n_layer + 1));
        QVERIFY(one_token <= uint64_t(4 * n_layer + 1));
    }

    void replan_moves_only_changed_neurons() {
        auto model = test_helpers::load_model(kModel);
        const uint64_t everything = sim_session(model, uint64_t(1) << 30)->device_report().used_bytes;
        // Budgets that all hold the KV cache, so the FFN's share grows and shrinks with them.
        auto s = sim_session(model, everything * 8 / 10);
        QVERIFY(s->device_report().kv_bytes > 0);
        const auto before = s->hot_neurons();
        const uint64_t uploaded_before = s->device_report().bytes_uploaded;
        QVERIFY(s->set_device_budget(everything * 95 / 100).ok());
        const auto after = s->hot_neurons();
        // One neuron's rows: gate, up and down_t, each 256 Q4_0 values (8 blocks of 18 bytes).
        const uint64_t neuron_bytes = 3 * 8 * 18;
        int64_t moved_in = 0;
        for (size_t il = 0; il < after.size(); ++il) moved_in += set_difference_size(after[il], before[il]);
        QVERIFY(moved_in > 0);
        QCOMPARE(s->device_report().bytes_uploaded - uploaded_before, uint64_t(moved_in) * neuron_bytes);
        QVERIFY(s->device_report().used_bytes <= everything * 95 / 100);
        // Back down: nothing is uploaded, and the text is still the CPU's.
        const uint64_t uploaded_mid = s->device_report().bytes_uploaded;
        QVERIFY(s->set_device_budget(everything * 75 / 100).ok());
        QVERIFY(s->device_report().kv_bytes > 0);
        QCOMPARE(s->device_report().bytes_uploaded, uploaded_mid);
        QVERIFY(s->device_report().used_bytes <= everything * 75 / 100);
        auto cpu = test_helpers::open_session(model, 64, 2);
        QCOMPARE(greedy_text(*s, *model, kPrompts[0]), greedy_text(*cpu, *model, kPrompts[0]));
    }

    // The KV cache leaves the device when a smaller budget no longer has room for it and comes
    // back when a larger one does, in the middle of an answer, with every position it held.
    void kv_cache_follows_a_replan_mid_answer() {
        auto model = test_helpers::load_model(kModel);
        const uint64_t everything = sim_session(model, uint64_t(1) << 30)->device_report().used_bytes;
        auto s = sim_session(model, everything);
        auto cpu = test_helpers::open_session(model, 64, 2);
        const std::string want = greedy_text(*cpu, *model, kPrompts[1]);

        std::string text, failure;
        std::vector<bool> kv_on_device;
        auto r = s->generate(model->tokenize(kPrompts[1], true), test_helpers::greedy(24), [&](const ember::TokenEvent& ev) {
            text += ev.text;
            const size_t n = kv_on_device.size();
            if ((n == 4 && !s->set_device_budget(everything / 2).ok()) || (n == 12 && !s->set_device_budget(everything).ok()))
                failure = "re-plan at token " + std::to_string(n) + " failed";
            kv_on_device.push_back(s->device_report().dense.find("KV cache") != std::string::npos);
            return true;
        });
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QVERIFY2(failure.empty(), failure.c_str());
        QCOMPARE(kv_on_device.size(), size_t(24));
        QVERIFY(kv_on_device[3] && !kv_on_device[4] && !kv_on_device[11] && kv_on_device[12] && kv_on_device[23]);
        QCOMPARE(text, want);
    }

    void missing_statistics_fall_back_to_cpu() {
        QTemporaryDir dir;
        const auto copy = std::filesystem::path(dir.path().toStdString()) / "model.powerinfer.gguf";
        std::filesystem::copy_file(kModel.toStdString(), copy);  // without its activation/ folder
        auto model = test_helpers::load_model(QString::fromStdString(copy.string()));
        auto s = sim_session(model, uint64_t(1) << 30);
        const ember::DeviceReport r = s->device_report();
        QCOMPARE(r.hot_neurons, int64_t(0));
        QVERIFY2(QString::fromStdString(r.note).contains("activation"), r.note.c_str());
        QVERIFY(QString::fromStdString(r.note).contains("FFN on the CPU only"));
    }

    void dense_model_offloads_whole_layers_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QString>("file");
        for (const char* file : {"tiny-relu-llama/model.dense.q4_0.gguf", "models/tiny-falcon-f16.gguf"}) {
            QTest::addRow("sim %s", file) << "sim" << file;
            for (const ember::GpuInfo& g : ember::probe_gpus().gpus)
                if (g.unusable.empty())
                    QTest::addRow("gpu:%d %s", g.index, file) << QStringLiteral("gpu:%1").arg(g.index) << file;
        }
    }

    // A dense model gets the same plan: attention, FFN matrices and the KV cache of as many
    // layers as the budget holds on the device, the rest on the CPU, and the same text.
    void dense_model_offloads_whole_layers() {
        QFETCH(QString, device);
        QFETCH(QString, file);
        auto model = test_helpers::load_model(QStringLiteral(EMBER_TEST_DATA_DIR) + "/" + file);
        const int32_t n_layer = model->info().n_layer;
        auto cpu = test_helpers::open_session(model, 64, 2);
        const std::string want = greedy_text(*cpu, *model, kPrompts[0]);
        const uint64_t everything =
            sim_session(model, uint64_t(1) << 30, false, false, device.toStdString())->device_report().used_bytes;
        QVERIFY(everything > 0);
        bool some_layers_seen = false;
        for (double share : {0.0, 0.5, 0.8, 1.0}) {
            const uint64_t budget = uint64_t(double(everything) * share);
            auto s = sim_session(model, budget, false, false, device.toStdString());
            QCOMPARE(greedy_text(*s, *model, kPrompts[0]), want);
            const ember::DeviceReport r = s->device_report();
            QVERIFY2(r.used_bytes <= budget, qPrintable(QString("used %1 of %2").arg(r.used_bytes).arg(budget)));
            QCOMPARE(r.ffn_bytes, uint64_t(0));
            // Layers on the device compute their whole FFN there: all their neurons count as hot.
            const auto hot = s->hot_neurons();
            int32_t device_layers = 0;
            for (const auto& layer : hot) {
                QVERIFY(layer.empty() || int32_t(layer.size()) == model->info().n_ff);
                device_layers += !layer.empty();
            }
            QCOMPARE(r.hot_neurons, int64_t(device_layers) * model->info().n_ff);
            if (share == 0.0) QCOMPARE(r.round_trips, uint64_t(0));
            if (device_layers > 0) {
                // Each layer there ran its attention sub-layer on the device, one round trip.
                QVERIFY(r.attention_sublayers > 0);
                QCOMPARE(r.attention_sublayers, r.attention_layers);
                QVERIFY(r.kv_bytes > 0);
                QVERIFY(r.dense_products > 0);
            }
            if (device_layers > 0 && device_layers < n_layer) {
                some_layers_seen = true;
                QVERIFY2(QString::fromStdString(r.dense).contains(QString("%1/%2 layers").arg(device_layers).arg(n_layer)),
                         r.dense.c_str());
            }
            if (share >= 1.0) {
                QCOMPARE(device_layers, n_layer);
                QVERIFY2(QString::fromStdString(r.dense).contains("the KV cache"), r.dense.c_str());
            }
            qInfo("budget %.0f %%: %d/%d layers, %llu of %llu bytes used; %s%s%s", 100 * share, device_layers, n_layer,
                  (unsigned long long)r.used_bytes, (unsigned long long)budget, r.dense.c_str(),
                  r.note.empty() ? "" : "; ", r.note.c_str());
        }
        QVERIFY(some_layers_seen);
    }

    void attention_the_device_cannot_run_whole_stays_split_data() {
        QTest::addColumn<QString>("device");
        QTest::addColumn<QStringList>("layout");  // ember-synth-model arguments
        const std::pair<const char*, QStringList> layouts[] = {
            {"qwen2", {"--arch", "qwen2"}},
            {"qwen3", {"--arch", "qwen3", "--head-dim", "64"}},
            {"gemma3", {"--arch", "gemma3", "--head-dim", "64"}},
            {"phi3", {"--arch", "phi3"}},  // its products are row ranges of fused matrices
        };
        for (const auto& [name, layout] : layouts) {
            QTest::addRow("sim %s", name) << "sim" << layout;
            for (const ember::GpuInfo& g : ember::probe_gpus().gpus)
                if (g.unusable.empty()) QTest::addRow("gpu:%d %s", g.index, name) << QStringLiteral("gpu:%1").arg(g.index) << layout;
        }
    }

    // Q/K/V biases (Qwen 2), per-head Q/K norms and heads wider than n_embd / n_head (Qwen 3),
    // sliding windows (Gemma), RoPE's attention factor (Phi 3.5): the device's attention
    // sub-layer has none of them, so such layers run their products there and the rest of
    // attention, with the KV cache, on the CPU; the text stays the same.
    void attention_the_device_cannot_run_whole_stays_split() {
        QFETCH(QString, device);
        QFETCH(QStringList, layout);
        const QString path = dir_.path() + "/" + QString(QTest::currentDataTag()).replace(' ', '-') + ".gguf";
        QProcess synth;
        synth.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model",
                    QStringList{"-o", path, "--type", "Q8_0", "--n-layer", "2", "--n-embd", "128", "--n-head", "4",
                                "--n-head-kv", "2", "--n-ff", "256", "--n-vocab", "600"} + layout);
        QVERIFY(synth.waitForFinished(60000));
        QVERIFY2(synth.exitCode() == 0, synth.readAllStandardError().constData());
        auto model = test_helpers::load_model(path);
        auto cpu = test_helpers::open_session(model, 64, 2);
        const std::string want = greedy_text(*cpu, *model, kPrompts[0]);
        auto s = sim_session(model, uint64_t(1) << 30, false, false, device.toStdString());
        if (device == "sim") QCOMPARE(greedy_text(*s, *model, kPrompts[0]), want);
        else {
            double worst = 0.0;
            const QString failure = expect_cpu_choices(*cpu, *s, *model, kPrompts[0], &worst);
            QVERIFY2(failure.isEmpty(), qPrintable(failure));
            qInfo("largest logit difference from the CPU's: %g", worst);
        }
        const ember::DeviceReport r = s->device_report();
        QVERIFY(r.dense_products > 0);
        QCOMPARE(r.attention_sublayers, uint64_t(0));
        QCOMPARE(r.kv_bytes, uint64_t(0));
    }

    void device_errors() {
        ember::SessionParams sp;
        sp.device_budget_bytes = 1 << 20;
        sp.device = "quantum";
        auto q = ember::Session::create(test_helpers::load_model(kModel), sp);
        QVERIFY(!q.ok());
        QVERIFY(QString::fromStdString(q.error().message).contains("'quantum' is not one of cpu, sim, gpu, gpu:N"));
        // Without a usable GPU, asking for one says why there is none.
        const ember::GpuProbe probe = ember::probe_gpus();
        if (!probe.first_usable()) {
            sp.device = "gpu";
            auto g = ember::Session::create(test_helpers::load_model(kModel), sp);
            QVERIFY(!g.ok());
            QVERIFY2(QString::fromStdString(g.error().message).contains(QString::fromStdString(probe.reason)),
                     g.error().message.c_str());
        }
        auto cpu = test_helpers::open_session(test_helpers::load_model(kModel), 64, 1);
        QVERIFY(!cpu->set_device_budget(1 << 20).ok());
    }
};

QTEST_GUILESS_MAIN(TestHybrid)
#include "tst_hybrid.moc"

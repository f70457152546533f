// Bamboo and Falcon, dense and sparse, against independent float64 PyTorch references
// (tests/data/models/make_fixtures.py): logits at every prompt position, greedy continuations,
// the predictor's active sets (which tell the right predictor input from the wrong one), the
// perfect-predictor identity, and hybrid execution on the sim device.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "engine_test_helpers.h"
#include "ember/model.h"
#include "ember/session.h"

namespace {

const QString kModels = QStringLiteral(EMBER_TEST_DATA_DIR) + "/models/";

using test_helpers::ints;
using test_helpers::read_json;

std::vector<float> read_logits(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(path));
    const QByteArray raw = f.readAll();
    std::vector<float> v(size_t(raw.size()) / 4);
    std::memcpy(v.data(), raw.constData(), v.size() * 4);
    return v;
}

int32_t argmax(std::span<const float> v) { return int32_t(std::max_element(v.begin(), v.end()) - v.begin()); }

std::shared_ptr<ember::Model> load(const QString& path, std::optional<float> threshold = std::nullopt) {
    ember::ModelParams mp;
    mp.sparse_threshold = threshold;
    return test_helpers::load_model(path, mp);
}

// Max |logit error| over every position of tokens evaluated as one batch.
double max_error(ember::Session& s, const std::vector<int32_t>& tokens, const std::vector<float>& want, int n_vocab,
                 bool check_argmax) {
    if (!s.evaluate(tokens, true).ok()) qFatal("evaluate failed");
    double err = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
        std::span<const float> got = s.logits(int32_t(t));
        std::span<const float> ref(want.data() + t * size_t(n_vocab), size_t(n_vocab));
        for (int i = 0; i < n_vocab; ++i) err = std::max(err, double(std::fabs(got[size_t(i)] - ref[size_t(i)])));
        if (check_argmax && argmax(got) != argmax(ref)) return INFINITY;
    }
    return err;
}

}  // namespace

class TestArchitectures : public QObject {
    Q_OBJECT

private slots:
    void dense_logits_match_pytorch_data() {
        QTest::addColumn<QString>("stem");
        QTest::addColumn<QString>("activation");
        QTest::newRow("bamboo") << "tiny-bamboo-f16" << "relu-sym";
        QTest::newRow("falcon") << "tiny-falcon-f16" << "relu";
    }

    void dense_logits_match_pytorch() {
        QFETCH(QString, stem);
        QFETCH(QString, activation);
        const QJsonObject ref = read_json(kModels + stem + ".reference.json");
        const std::vector<int32_t> tokens = ints(ref["tokens"].toArray());
        const int n_vocab = ref["n_vocab"].toInt();
        auto model = load(kModels + stem + ".gguf");
        QCOMPARE(QString::fromStdString(model->info().architecture), ref["arch"].toString());
        QCOMPARE(QString::fromStdString(model->info().ffn_activation), activation);
        QVERIFY(!model->info().sparse);
        // The tokenizer gives the reference's ids (SentencePiece + BOS for Bamboo, GPT-2 BPE
        // without BOS for Falcon).
        QCOMPARE(model->add_bos(), ref["add_bos"].toBool());
        QCOMPARE(model->tokenize(ref["text"].toString().toStdString(), model->add_bos()), tokens);

        // F16 weights meet F16 activations and the KV cache is F16, as in llama.cpp: ~1e-2.
        auto s = test_helpers::open_session(model, 64, 2);
        const double err = max_error(*s, tokens, read_logits(kModels + stem + ".logits.f32"), n_vocab, true);
        qInfo("%s: max |logit error| %.3g", qPrintable(stem), err);
        QVERIFY2(err <= 2e-2, qPrintable(QString("max error %1").arg(err)));

        auto g = test_helpers::open_session(model, 64, 2);
        auto result = g->generate(tokens, test_helpers::greedy(16));
        QVERIFY(result.ok());
        QCOMPARE(result->tokens, ints(ref["greedy_tokens"].toArray()));
    }

    void sparse_logits_and_active_sets_match_pytorch_data() {
        QTest::addColumn<QString>("stem");
        QTest::addColumn<int>("threads");
        for (int t : {1, 2}) {
            QTest::newRow(qPrintable(QString("bamboo t%1").arg(t))) << "tiny-bamboo-f16.powerinfer" << t;
            QTest::newRow(qPrintable(QString("falcon t%1").arg(t))) << "tiny-falcon-f16.powerinfer" << t;
        }
    }

    void sparse_logits_and_active_sets_match_pytorch() {
        QFETCH(QString, stem);
        QFETCH(int, threads);
        const QJsonObject ref = read_json(kModels + stem + ".reference.json");
        const std::vector<int32_t> tokens = ints(ref["tokens"].toArray());
        const int n_vocab = ref["n_vocab"].toInt();
        auto model = load(kModels + stem + ".gguf");
        QVERIFY(model->info().powerinfer_file && model->info().sparse);
        QCOMPARE(double(model->info().sparse_threshold), ref["sparse_threshold"].toDouble());
        auto s = test_helpers::open_session(model, 64, threads);
        const double err = max_error(*s, tokens, read_logits(kModels + stem + ".logits.f32"), n_vocab, true);
        qInfo("%s: max |logit error| %.3g", qPrintable(stem), err);
        QVERIFY2(err <= 2e-2, qPrintable(QString("max error %1").arg(err)));

        // Every score is at least 0.05 from the threshold in the reference, far beyond the
        // engine's rounding, so the active counts must be exactly the reference's; the wrong
        // predictor input (a normalized vector) would give clearly different ones.
        const auto layers = s->layer_sparsity();
        const QJsonArray right = ref["active_counts"].toArray();
        const QJsonArray wrong = ref["wrong_predictor_input"].toObject()["active_counts"].toArray();
        QCOMPARE(int(layers.size()), right.size());
        for (int il = 0; il < right.size(); ++il) {
            QCOMPARE(layers[size_t(il)].tokens, int64_t(tokens.size()));
            QCOMPARE(layers[size_t(il)].active, int64_t(right[il].toInt()));
            QVERIFY(layers[size_t(il)].active != int64_t(wrong[il].toInt()));
        }
    }

    void all_neurons_active_equals_dense_pytorch_data() {
        QTest::addColumn<QString>("stem");
        QTest::newRow("bamboo") << "tiny-bamboo-f16";
        QTest::newRow("falcon") << "tiny-falcon-f16";
    }

    void all_neurons_active_equals_dense_pytorch() {
        // The perfect predictor: with the threshold at -inf every neuron is computed, and for
        // ReLU FFNs a neuron the ReLU zeroes contributes nothing, so the sparse file must give
        // the dense reference's logits.
        QFETCH(QString, stem);
        const QJsonObject ref = read_json(kModels + stem + ".reference.json");
        const std::vector<int32_t> tokens = ints(ref["tokens"].toArray());
        auto model = load(kModels + stem + ".powerinfer.gguf", -INFINITY);
        auto s = test_helpers::open_session(model, 64, 2);
        const double err = max_error(*s, tokens, read_logits(kModels + stem + ".logits.f32"), ref["n_vocab"].toInt(), true);
        qInfo("%s all active: max |logit error| %.3g", qPrintable(stem), err);
        QVERIFY2(err <= 2e-2, qPrintable(QString("max error %1").arg(err)));
        QCOMPARE(s->layer_sparsity()[0].active, int64_t(tokens.size()) * model->info().n_ff);
    }

    void hybrid_split_does_not_change_the_text_data() {
        QTest::addColumn<QString>("stem");
        QTest::newRow("bamboo") << "tiny-bamboo-f16";
        QTest::newRow("falcon") << "tiny-falcon-f16";
    }

    void hybrid_split_does_not_change_the_text() {
        // The model beside its activation statistics in a scratch folder (sessions write the
        // .gpuidx cache there). Budgets from nothing to everything: same greedy tokens, the
        // device within its budget and holding more neurons as the budget grows.
        QFETCH(QString, stem);
        QTemporaryDir dir;
        const QString model_path = dir.path() + "/" + stem + ".powerinfer.gguf";
        QVERIFY(QFile::copy(kModels + stem + ".powerinfer.gguf", model_path));
        QVERIFY(QDir(dir.path()).mkdir("activation"));
        for (const QString& f : QDir(kModels + stem + ".activation").entryList(QDir::Files))
            QVERIFY(QFile::copy(kModels + stem + ".activation/" + f, dir.path() + "/activation/" + f));
        const QJsonObject ref = read_json(kModels + stem + ".reference.json");
        const std::vector<int32_t> prompt = ints(ref["tokens"].toArray());
        auto model = load(model_path);

        auto cpu = test_helpers::open_session(model, 64, 2);
        auto expected = cpu->generate(prompt, test_helpers::greedy(12));
        QVERIFY(expected.ok());
        auto sim = [&](uint64_t budget) {
            ember::SessionParams sp;
            sp.n_ctx = 256;
            sp.n_threads = 2;
            sp.device = "sim";
            sp.device_budget_bytes = budget;
            auto s = ember::Session::create(model, sp);
            if (!s) qFatal("%s", s.error().message.c_str());
            return std::move(*s);
        };
        // What everything takes on the device, then budgets from nothing up to that.
        const uint64_t full = sim(uint64_t(64) << 20)->device_report().used_bytes;
        const int64_t all = int64_t(model->info().n_layer) * model->info().n_ff;
        int64_t previous_hot = -1;
        bool split_seen = false;
        for (int step = 0; step <= 10; ++step) {
            const uint64_t budget = step == 0 ? 0 : full - full * uint64_t(10 - step) / 40;
            auto s = sim(budget);
            auto got = s->generate(prompt, test_helpers::greedy(12));
            QVERIFY(got.ok());
            QCOMPARE(got->tokens, expected->tokens);
            const ember::DeviceReport r = s->device_report();
            QVERIFY(r.used_bytes <= budget);
            QVERIFY2(r.hot_neurons >= previous_hot, qPrintable(QString::fromStdString(r.note)));
            previous_hot = r.hot_neurons;
            split_seen = split_seen || (r.hot_neurons > 0 && r.hot_neurons < all);
            int64_t on_device = 0;
            for (const auto& l : s->layer_sparsity()) on_device += l.active_on_device;
            QCOMPARE(on_device > 0, r.hot_neurons > 0);
            // Everything fits at the last step: each layer's attention sub-layer runs on the
            // device whole, one round trip each.
            if (step == 10) {
                QVERIFY(r.attention_layers > 0);
                QCOMPARE(r.attention_sublayers, r.attention_layers);
            }
        }
        QVERIFY(split_seen);
        QCOMPARE(previous_hot, all);
    }
};

QTEST_GUILESS_MAIN(TestArchitectures)
#include "tst_architectures.moc"

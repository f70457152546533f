// The Python toolchain (engine/convert/) end to end: tiny random Hugging Face checkpoints
// (make_tiny_models.py, with float64 PyTorch logits) converted by ember-convert's code -> Ember's
// logits and greedy tokens; ember-profile's activation files -> Ember's .pt reader and torch.load.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "engine_test_helpers.h"
#include "ember/model.h"
#include "ember/session.h"
#include "sparse/activation_file.h"

namespace {

const QString kTools = QStringLiteral(EMBER_TOOLS_DIR) + "/";
const QString kHere = QStringLiteral(EMBER_CONVERT_TEST_DIR) + "/";

// Max |logit error| against float64 PyTorch on these unit-scale models (logit std ~1): observed
// ~1.3e-3 for F32 files and ~3e-3 for F16 files (weights rounded to 11 bits); both tolerances
// leave room for other summation orders and SIMD paths.
constexpr double kTolF32 = 5e-3;
constexpr double kTolF16 = 2e-2;

struct Run {
    int exit_code = -1;
    QString out;
};

Run run(const QString& program, const QStringList& args) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(120000)) qFatal("%s did not finish", qPrintable(program));
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
}

using test_helpers::ints;
using test_helpers::read_json;

int32_t argmax(std::span<const float> v) { return int32_t(std::max_element(v.begin(), v.end()) - v.begin()); }

}  // namespace

class TestConvertTools : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    QString path(const QString& name) const { return dir_.filePath(name); }

    // make_tiny_models.py converts each checkpoint to a dense F16 and a sparse F32 file.
    QString converted(const QString& arch, bool sparse) const {
        return path(arch + (sparse ? ".pwri.f32.gguf" : ".dense.f16.gguf"));
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        const Run r = run("/usr/bin/python3", {kHere + "make_tiny_models.py", dir_.path()});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
    }

    void logits_match_pytorch_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<bool>("sparse");
        for (const char* arch : {"llama", "bamboo", "falcon"})
            for (bool sparse : {false, true})
                QTest::addRow("%s-%s", arch, sparse ? "pwri-f32" : "dense-f16") << arch << sparse;
    }

    // Every position of a 16-token batch; the argmax wherever PyTorch's top two are apart.
    void logits_match_pytorch() {
        QFETCH(QString, arch);
        QFETCH(bool, sparse);
        const QJsonObject ref = read_json(path(arch + ".reference.json"));
        const int n_vocab = ref["n_vocab"].toInt();
        const std::vector<int32_t> tokens = ints(ref["tokens"].toArray());
        const QJsonArray want = ref[sparse ? "sparse" : "dense"].toArray();
        const double tol = sparse ? kTolF32 : kTolF16;

        auto model = test_helpers::load_model(converted(arch, sparse));
        QCOMPARE(model->info().powerinfer_file, sparse);
        QCOMPARE(model->info().architecture, arch.toStdString());
        auto s = test_helpers::open_session(model, 64, 1);
        QVERIFY(s->evaluate(tokens, true).ok());
        double err = 0;
        for (size_t t = 0; t < tokens.size(); ++t) {
            std::span<const float> got = s->logits(int32_t(t));
            std::vector<float> r(static_cast<size_t>(n_vocab));
            for (int i = 0; i < n_vocab; ++i) r[size_t(i)] = float(want[int(t) * n_vocab + i].toDouble());
            for (int i = 0; i < n_vocab; ++i) err = std::max(err, double(std::fabs(got[size_t(i)] - r[size_t(i)])));
            std::vector<float> sorted = r;
            std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
            if (sorted[0] - sorted[1] > 2 * tol) QCOMPARE(argmax(got), argmax(r));
        }
        qInfo("%s: max |logit error| %.2e (tolerance %.0e)", QTest::currentDataTag(), err, tol);
        QVERIFY(err <= tol);
        if (sparse) {
            // The predictors keep a fixed subset of neurons: Ember must compute exactly those.
            const std::vector<int32_t> kept = ints(ref["kept"].toArray());
            const auto ls = s->layer_sparsity();
            QCOMPARE(ls.size(), kept.size());
            for (size_t il = 0; il < kept.size(); ++il)
                QCOMPARE(ls[il].active, int64_t(kept[il]) * int64_t(tokens.size()));
        }
    }

    void greedy_matches_pytorch_data() {
        QTest::addColumn<QString>("arch");
        for (const char* arch : {"llama", "bamboo", "falcon"}) QTest::newRow(arch) << arch;
    }

    // Greedy continuation of the first 4 tokens, as far as PyTorch's choice is clear-cut.
    void greedy_matches_pytorch() {
        QFETCH(QString, arch);
        const QJsonObject ref = read_json(path(arch + ".reference.json"));
        const std::vector<int32_t> tokens = ints(ref["tokens"].toArray());
        const std::vector<int32_t> want = ints(ref["greedy"].toArray());
        const QJsonArray margins = ref["greedy_margins"].toArray();
        auto s = test_helpers::open_session(test_helpers::load_model(converted(arch, false)), 64, 1);
        auto got = s->generate(std::span(tokens).first(4), test_helpers::greedy(int32_t(want.size())));
        QVERIFY(got.ok());
        int checked = 0;
        for (size_t i = 0; i < want.size() && margins[int(i)].toDouble() > 2 * kTolF16; ++i, ++checked)
            QCOMPARE(got->tokens[i], want[i]);
        QVERIFY2(checked >= 3, "too few clear-cut greedy steps to compare");
    }

    // ember-profile writes what Ember's strict .pt reader and torch.load both read, the same.
    void profile_files_load_in_ember_and_torch() {
        const QString act = path("activation");
        const Run r = run(kTools + "ember-profile", {path("llama"), kHere + "corpus.txt", "-o", act,
                                                     "--ctx", "64", "--max-tokens", "1024"});
        QVERIFY2(r.exit_code == 0, qPrintable(r.out));
        const QJsonObject ref = read_json(path("llama.reference.json"));
        const int n_layer = ref["n_layer"].toInt(), n_ff = ref["n_ff"].toInt();
        const auto ember_counts = ember::sparse::read_activation_dir(act.toStdString(), n_layer, n_ff);
        const Run t = run("/usr/bin/python3",
                          {"-c", "import json, sys, torch\n"
                                 "print(json.dumps([[str(torch.load('%s/activation_%d.pt' % (sys.argv[1], i)).dtype)]"
                                 " + torch.load('%s/activation_%d.pt' % (sys.argv[1], i)).tolist()"
                                 " for i in range(int(sys.argv[2]))]))",
                           act, QString::number(n_layer)});
        QVERIFY2(t.exit_code == 0, qPrintable(t.out));
        const QJsonArray torch_counts = QJsonDocument::fromJson(t.out.toUtf8()).array();
        QCOMPARE(torch_counts.size(), n_layer);
        for (int il = 0; il < n_layer; ++il) {
            const QJsonArray layer = torch_counts[il].toArray();
            QCOMPARE(layer[0].toString(), QString("torch.float32"));
            QCOMPARE(layer.size() - 1, n_ff);
            double total = 0;
            for (int i = 0; i < n_ff; ++i) {
                QCOMPARE(ember_counts[size_t(il)][size_t(i)], layer[i + 1].toDouble());
                QVERIFY(ember_counts[size_t(il)][size_t(i)] <= 1024);
                total += ember_counts[size_t(il)][size_t(i)];
            }
            QVERIFY(total > 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestConvertTools)
#include "tst_convert_tools.moc"

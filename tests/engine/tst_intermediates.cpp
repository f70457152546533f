// Named intermediates (Session::set_intermediate_callback, `ember-cli --dump`): every step of a
// layer is handed out under its name, the names fit together (a layer's output is its input
// plus what its sub-layers added), a device changes none of the values it lets through, and
// the command line writes them as files.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "engine_test_helpers.h"
#include "ember/model.h"
#include "ember/session.h"

namespace {

const QString kData = QStringLiteral(EMBER_TEST_DATA_DIR);

struct Captured {
    int32_t pos0 = 0, n_tokens = 0;
    int64_t n_cols = 0;
    std::vector<float> values;
};

// name@layer -> what the last evaluation handed out under it (one batch).
using Captures = std::map<std::pair<std::string, int32_t>, Captured>;

Captures capture(ember::Session& s, const std::vector<int32_t>& tokens) {
    Captures c;
    s.set_intermediate_callback([&](const ember::Intermediate& t) {
        c[{std::string(t.name), t.layer}] = {t.pos0, t.n_tokens, t.n_cols,
                                             std::vector<float>(t.data, t.data + t.n_tokens * t.n_cols)};
    });
    s.clear();
    if (!s.evaluate(tokens).ok()) qFatal("evaluation failed");
    s.set_intermediate_callback({});
    return c;
}

std::unique_ptr<ember::Session> session(std::shared_ptr<ember::Model> m, const std::string& device, uint64_t budget) {
    ember::SessionParams sp;
    sp.n_ctx = 64;
    sp.n_threads = 2;
    sp.device = device;
    sp.device_budget_bytes = budget;
    auto s = ember::Session::create(std::move(m), sp);
    if (!s) qFatal("%s", s.error().message.c_str());
    return std::move(*s);
}

}  // namespace

class TestIntermediates : public QObject {
    Q_OBJECT

private slots:
    void layers_add_up() {
        auto model = test_helpers::load_model(kData + "/models/tiny-llama-f16.gguf");
        auto s = session(model, "cpu", 0);
        const std::vector<int32_t> tokens = model->tokenize("The quick brown fox", true);
        const int32_t n = int32_t(tokens.size());
        const Captures c = capture(*s, tokens);
        const int32_t n_layer = model->info().n_layer;
        const int64_t n_embd = model->info().n_embd;
        for (int32_t il = 0; il < n_layer; ++il) {
            for (const char* name : {"attn_norm", "q", "k", "v", "kqv_out", "attn_out", "ffn_inp", "ffn_norm", "ffn_gate",
                                     "ffn_up", "ffn_act", "ffn_out", "l_out"}) {
                QVERIFY2(c.count({name, il}), qPrintable(QString("%1@%2 missing").arg(name).arg(il)));
                const Captured& t = c.at({name, il});
                QCOMPARE(t.pos0, 0);
                QCOMPARE(t.n_tokens, n);
            }
            QCOMPARE(c.at({"ffn_act", il}).n_cols, int64_t(model->info().n_ff));
            const std::vector<float>& inp = c.at({"ffn_inp", il}).values;
            const std::vector<float>& attn = c.at({"attn_out", il}).values;
            const std::vector<float>& ffn = c.at({"ffn_out", il}).values;
            const std::vector<float>& out = c.at({"l_out", il}).values;
            QCOMPARE(int64_t(out.size()), n * n_embd);
            for (size_t i = 0; i < out.size(); ++i) {
                QCOMPARE(out[i], inp[i] + ffn[i]);
                if (il > 0) QCOMPARE(inp[i], c.at({"l_out", il - 1}).values[i] + attn[i]);
            }
        }
        // The logits handed out are the session's.
        const Captured& logits = c.at({"result_output", -1});
        QCOMPARE(logits.n_tokens, 1);
        QCOMPARE(logits.pos0, n - 1);
        const std::span<const float> want = s->logits();
        QCOMPARE(logits.values, std::vector<float>(want.begin(), want.end()));
        QCOMPARE(c.at({"result_norm", -1}).n_cols, n_embd);
    }

    // A sparse layer hands out its activation vector token by token: zero wherever the
    // predictor skipped the neuron.
    void sparse_activation_per_token() {
        auto model = test_helpers::load_model(kData + "/tiny-relu-llama/model.q4_0.powerinfer.gguf");
        auto s = session(model, "cpu", 0);
        std::vector<std::pair<int32_t, int64_t>> seen;  // (position, active neurons) of layer 0
        s->set_intermediate_callback([&](const ember::Intermediate& t) {
            if (t.name != "ffn_act" || t.layer != 0) return;
            QCOMPARE(t.n_tokens, 1);
            int64_t nonzero = 0;
            for (int64_t i = 0; i < t.n_cols; ++i) nonzero += t.data[i] != 0.0f;
            seen.emplace_back(t.pos0, nonzero);
        });
        QVERIFY(s->evaluate(model->tokenize("And it came to pass", true)).ok());
        QVERIFY(seen.size() >= 3);
        const auto sparsity = s->layer_sparsity();
        int64_t nonzero = 0;
        for (size_t t = 0; t < seen.size(); ++t) {
            QCOMPARE(seen[t].first, int32_t(t));
            nonzero += seen[t].second;
        }
        QVERIFY(nonzero > 0);
        QVERIFY(nonzero <= sparsity[0].active);
    }

    // With whole layers on the sim device, what it lets through equals the CPU's bit for bit;
    // the steps inside its attention sub-layer are not seen.
    void device_changes_no_value() {
        auto model = test_helpers::load_model(kData + "/tiny-relu-llama/model.dense.q4_0.gguf");
        const std::vector<int32_t> tokens = model->tokenize("The LORD is my shepherd", true);
        auto cpu = session(model, "cpu", 0);
        const Captures want = capture(*cpu, tokens);
        auto sim = session(model, "sim", uint64_t(1) << 30);
        const Captures got = capture(*sim, tokens);
        QVERIFY(sim->device_report().attention_sublayers > 0);
        QVERIFY(!got.count({"attn_norm", 0}));
        QVERIFY(!got.count({"q", 0}));
        for (const auto& [key, t] : got) {
            QVERIFY2(want.count(key), key.first.c_str());
            QCOMPARE(t.values, want.at(key).values);
        }
        QVERIFY(got.count({"l_out", model->info().n_layer - 1}));
        QVERIFY(got.count({"ffn_act", 0}));
    }

    void cli_writes_files() {
        QTemporaryDir dir;
        const QString model = kData + "/models/tiny-llama-f16.gguf";
        QProcess cli;
        cli.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-cli",
                  {"-m", model, "-p", "The quick brown fox", "-n", "2", "--temp", "0", "-t", "1", "--dump", "l_out@1",
                   dir.path(), "--dump", "result_norm", dir.path()});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        const QStringList files = QDir(dir.path()).entryList(QDir::Files, QDir::Name);
        // The prompt's batch at position 0, then one token at a time.
        QVERIFY2(files.contains("l_out-1-0.f32") && files.contains("l_out-1-0.json"), qPrintable(files.join(' ')));
        QVERIFY(!files.contains("l_out-0-0.f32"));
        QFile meta(dir.filePath("l_out-1-0.json"));
        QVERIFY(meta.open(QIODevice::ReadOnly));
        const QJsonObject j = QJsonDocument::fromJson(meta.readAll()).object();
        QCOMPARE(j["name"].toString(), QString("l_out"));
        QCOMPARE(j["layer"].toInt(), 1);
        const int n_tokens = j["shape"][0].toInt(), n_cols = j["shape"][1].toInt();
        QVERIFY(n_tokens >= 4);
        QCOMPARE(j["positions"][1].toInt() - j["positions"][0].toInt(), n_tokens);
        QCOMPARE(QFileInfo(dir.filePath("l_out-1-0.f32")).size(), qint64(n_tokens) * n_cols * 4);
        const int64_t pos = j["positions"][1].toInt();
        QVERIFY(files.contains(QString("l_out-1-%1.f32").arg(pos)));  // the first generated token
        // The output norm of the prompt's last token only.
        QVERIFY(files.contains(QString("result_norm-out-%1.json").arg(pos - 1)));
        QVERIFY(!files.contains("result_norm-out-0.json"));

        QProcess bad;
        bad.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-cli",
                  {"-m", model, "-p", "x", "--dump", "l_out@one", dir.path()});
        QVERIFY(bad.waitForFinished(60000));
        QCOMPARE(bad.exitCode(), 2);
        QVERIFY(QString::fromUtf8(bad.readAllStandardError()).contains("l_out@one"));
    }
};

QTEST_GUILESS_MAIN(TestIntermediates)
#include "tst_intermediates.moc"

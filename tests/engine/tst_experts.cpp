// SmallThinker's experts beyond what upstream checks (tst_upstream_reference compares the graph
// itself): the gate-first path of one token against whole experts over a batch, PowerInfer's
// transposed down layout against upstream's, the neuron counts --stats shows, experts (or, in
// PowerInfer's layout, single neurons) placed on the sim device writing the CPU's text, the
// routing profile ember-calibrate writes and a device plan follows, experts kept partly on disk;
// PowerInfer's sparse LM head (lm_head_profiler). The files are written by ember-synth-model.
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <array>
#include <cmath>

#include "engine_test_helpers.h"
#include "ember/model.h"
#include "ember/session.h"
#include "gguf/gguf_reader.h"
#include "sparse/expert_profile.h"
#include "tensor/quantize.h"

namespace {

const QString kData = QStringLiteral(EMBER_TEST_DATA_DIR);
constexpr int32_t kPromptTokens = 12;
constexpr int32_t kGreedy = 24;

// Random token ids from Qwen's vocabulary's ordinary range.
std::vector<int32_t> prompt(int32_t n = kPromptTokens) {
    std::vector<int32_t> ids;
    for (int32_t i = 0; i < n; ++i) ids.push_back(1000 + (i * 7919) % 20000);
    return ids;
}

std::vector<int32_t> greedy_text(ember::Session& session) {
    std::vector<int32_t> out;
    auto r = session.generate(prompt(), test_helpers::greedy(kGreedy), [&](const ember::TokenEvent& e) {
        out.push_back(e.token);
        return true;
    });
    if (!r) qFatal("%s", r.error().message.c_str());
    return out;
}

std::vector<int32_t> greedy_text(const std::shared_ptr<ember::Model>& model, ember::SessionParams sp) {
    auto session = ember::Session::create(model, sp);
    if (!session) qFatal("%s", session.error().message.c_str());
    return greedy_text(**session);
}

// The experts each layer's sim device holds, from the split view's neuron ids (expert e's are
// e·768..).
std::vector<std::vector<bool>> resident_experts(const ember::Session& session) {
    const auto hot = session.hot_neurons();
    std::vector<std::vector<bool>> resident(hot.size(), std::vector<bool>(8, false));
    for (size_t il = 0; il < hot.size(); ++il)
        for (int32_t id : hot[il]) resident[il][size_t(id / 768)] = true;
    return resident;
}

uint64_t file_bytes(const QString& path) { return uint64_t(QFileInfo(path).size()); }

double max_abs_difference(std::span<const float> a, std::span<const float> b) {
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::fabs(a[i] - b[i])));
    return d;
}

// The prompt evaluated as one batch and token by token, each on a fresh session: the largest
// |Δ logit| over its positions, and both sessions for their counts.
struct BatchAndSingle {
    double worst = 0.0;
    std::unique_ptr<ember::Session> batch, single;
};
BatchAndSingle batch_and_single(const std::shared_ptr<ember::Model>& model, const std::vector<int32_t>& ids) {
    BatchAndSingle r{0.0, test_helpers::open_session(model, 64, 2), test_helpers::open_session(model, 64, 2)};
    if (!r.batch->evaluate(ids, true).ok()) qFatal("the batch failed");
    for (size_t t = 0; t < ids.size(); ++t) {
        if (!r.single->evaluate(std::span(&ids[t], 1)).ok()) qFatal("token %zu failed", t);
        r.worst = std::max(r.worst, max_abs_difference(r.single->logits(), r.batch->logits(int32_t(t))));
    }
    return r;
}

// Which bytes of `path` this process holds as pages of the file itself (mapped, read on demand)
// rather than in memory of its own: from /proc/self/maps, the file's mappings and their offsets.
// Pages are the unit: a page shared with a neighbour that lives in memory does, so only the
// whole pages inside [begin, end) are asked about.
struct FileMappings {
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // file offsets [begin, end) mapped from the file
    bool holds(uint64_t begin, uint64_t end) const {
        constexpr uint64_t kPage = 4096;
        begin = (begin + kPage - 1) / kPage * kPage;
        end = end / kPage * kPage;
        for (const auto& [b, e] : ranges)
            if (b <= begin && end <= e) return true;
        return false;
    }
};
FileMappings file_mappings(const QString& path) {
    FileMappings m;
    QFile maps("/proc/self/maps");
    if (!maps.open(QIODevice::ReadOnly)) qFatal("cannot read /proc/self/maps");
    const QString canonical = QFileInfo(path).canonicalFilePath();
    for (const QByteArray& line : maps.readAll().split('\n')) {
        const QList<QByteArray> f = line.simplified().split(' ');
        if (f.size() < 6 || QString::fromUtf8(f[5]) != canonical) continue;
        const QList<QByteArray> span = f[0].split('-');
        const uint64_t start = span[0].toULongLong(nullptr, 16), end = span[1].toULongLong(nullptr, 16);
        const uint64_t offset = f[2].toULongLong(nullptr, 16);
        m.ranges.emplace_back(offset, offset + (end - start));
    }
    return m;
}

}  // namespace

class TestExperts : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    QString synth(const QString& name, const QStringList& more) {
        const QString out = dir_.path() + "/" + name;
        QProcess p;
        p.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model",
                QStringList{"-o", out, "--arch", "smallthinker", "--n-layer", "2", "--n-embd", "256", "--n-head", "4",
                            "--n-head-kv", "2", "--n-ff", "768", "--n-vocab", "32000", "--experts", "8", "--experts-used",
                            "2"} +
                    more);
        if (!p.waitForFinished(120000) || p.exitCode() != 0) qFatal("ember-synth-model: %s", p.readAllStandardError().constData());
        return out;
    }

    static constexpr uint64_t kPartialBudget = uint64_t(8) << 20;

    // A sim session at a budget that holds some of the experts, planned before any token.
    std::unique_ptr<ember::Session> partial_device_session(const std::shared_ptr<ember::Model>& model) {
        ember::SessionParams sp;
        sp.n_ctx = 128;
        sp.n_threads = 2;
        sp.device = "sim";
        sp.device_budget_bytes = kPartialBudget;
        auto session = ember::Session::create(model, sp);
        if (!session) qFatal("%s", session.error().message.c_str());
        return std::move(*session);
    }

    // The profiler's scores for a normalized row x, computed from the file's weights in double
    // precision, independently of the engine's kernels: W2 · (W1 · x), the two matrices one
    // after the other in lm_head_profiler.weight.
    static std::vector<double> profiler_scores(const QString& path, const std::vector<float>& x, int64_t n_vocab) {
        auto file = ember::gguf::File::open(path.toStdString());
        const ember::gguf::TensorInfo* t = file->find_tensor("lm_head_profiler.weight");
        const int64_t n_embd = int64_t(x.size()), rank = t->nelements() / (n_embd + n_vocab);
        std::vector<float> w(static_cast<size_t>(t->nelements()));
        ember::tensor::dequantize_row(ember::tensor::DType::Q4_0, t->data, w.data(), t->nelements());
        std::vector<double> h(static_cast<size_t>(rank)), s(static_cast<size_t>(n_vocab));
        for (int64_t j = 0; j < rank; ++j)
            for (int64_t k = 0; k < n_embd; ++k) h[size_t(j)] += double(w[size_t(j * n_embd + k)]) * x[size_t(k)];
        const float* w2 = w.data() + rank * n_embd;
        for (int64_t v = 0; v < n_vocab; ++v)
            for (int64_t j = 0; j < rank; ++j) s[size_t(v)] += double(w2[v * rank + j]) * h[size_t(j)];
        return s;
    }

private slots:
    // --sparse-lm-head: one token's logits are the dense LM head's on the rows whose profiler
    // score is above 0 and exactly 0 elsewhere; without the flag the profiler is not used, and a
    // file without one is an error naming it.
    void sparse_lm_head_computes_the_rows_its_profiler_picks_data() {
        QTest::addColumn<QString>("type");
        QTest::newRow("Q4_0") << "Q4_0";  // the LM head grouped by eight rows where the CPU's kernels are
        QTest::newRow("F16") << "F16";
    }
    void sparse_lm_head_computes_the_rows_its_profiler_picks() {
        QFETCH(QString, type);
        const QString path = synth("lm-head-" + type + ".gguf", {"--type", type, "--lm-head-profiler", "64"});
        ember::ModelParams mp;
        auto model = test_helpers::load_model(path, mp);
        mp.sparse_lm_head = true;
        auto sparse_model = test_helpers::load_model(path, mp);
        const int32_t n_vocab = model->info().n_vocab;
        ember::SessionParams sp;
        sp.n_ctx = 64;
        sp.n_threads = 2;
        auto dense = ember::Session::create(model, sp);
        auto sparse = ember::Session::create(sparse_model, sp);
        QVERIFY(dense && sparse);
        std::vector<float> x;
        (*sparse)->set_intermediate_callback([&](const ember::Intermediate& im) {
            if (im.name == "result_norm") x.assign(im.data, im.data + im.n_cols);
        });
        QVERIFY((*dense)->evaluate(prompt()));
        QVERIFY((*sparse)->evaluate(prompt()));
        const std::span<const float> want = (*dense)->logits(), got = (*sparse)->logits();
        const std::vector<double> score = profiler_scores(path, x, n_vocab);
        double rms = 0;
        for (double s : score) rms += s * s;
        rms = std::sqrt(rms / double(n_vocab));
        // The engine scores Q8_0-rounded inputs: only scores this close to 0 may fall either way.
        const double margin = 0.02 * rms;
        int computed = 0, near_zero = 0;
        for (int32_t v = 0; v < n_vocab; ++v) {
            const bool picked = got[size_t(v)] != 0.0f;
            computed += picked;
            if (picked) QVERIFY2(std::fabs(got[size_t(v)] - want[size_t(v)]) <= 1e-4f * (1 + std::fabs(want[size_t(v)])),
                                 qPrintable(QString("row %1: %2 vs %3").arg(v).arg(got[size_t(v)]).arg(want[size_t(v)])));
            if (std::fabs(score[size_t(v)]) < margin) {
                ++near_zero;
                continue;
            }
            QVERIFY2(picked == (score[size_t(v)] > 0), qPrintable(QString("row %1: score %2").arg(v).arg(score[size_t(v)])));
        }
        QVERIFY2(near_zero < n_vocab / 20, qPrintable(QString::number(near_zero)));
        QVERIFY2(computed > n_vocab / 10 && computed < n_vocab * 9 / 10, qPrintable(QString::number(computed)));

        // generate() reports the rows computed: all of them without the flag, the picked ones with it.
        auto counted = [&](ember::Session& s) {
            s.clear();
            if (!s.generate(prompt(), test_helpers::greedy(4))) qFatal("generate failed");
            return std::pair{s.timings().lm_head_rows, s.timings().lm_head_tokens};
        };
        const auto [dense_rows, dense_tokens] = counted(**dense);
        QCOMPARE(dense_tokens, 5);  // the prompt's last token and each of the four generated ones
        QCOMPARE(dense_rows, int64_t(n_vocab) * 5);
        const auto [sparse_rows, sparse_tokens] = counted(**sparse);
        QCOMPARE(sparse_tokens, 5);
        QVERIFY(sparse_rows > 0 && sparse_rows < int64_t(n_vocab) * 5);

        // A batch of logits (perplexity's) stays dense, as PowerInfer's runtime keeps it (to
        // rounding: the sparse model keeps the LM head's rows one by one, not grouped).
        (*sparse)->clear();
        QVERIFY((*sparse)->evaluate(prompt(), true));
        (*dense)->clear();
        QVERIFY((*dense)->evaluate(prompt(), true));
        QVERIFY(max_abs_difference((*sparse)->logits(3), (*dense)->logits(3)) < 1e-3);

        const QString plain = synth("no-profiler-" + type + ".gguf", {"--type", type});
        auto without = ember::Model::load(plain.toStdString(), mp);
        QVERIFY(!without);
        QVERIFY2(without.error().message.find(plain.toStdString()) != std::string::npos &&
                     without.error().message.find("lm_head_profiler.weight") != std::string::npos,
                 without.error().message.c_str());
    }

    // One token at a time runs the gate-first path, a batch the whole experts (where an expert
    // has two or more of its tokens); the same positions' logits agree to rounding (the skipped
    // neurons' activations are exactly 0).
    void gate_first_equals_whole_experts_data() {
        QTest::addColumn<QString>("type");
        QTest::addColumn<double>("tolerance");
        QTest::newRow("F16") << "F16" << 1e-3;
        QTest::newRow("Q4_0") << "Q4_0" << 1e-3;
    }
    void gate_first_equals_whole_experts() {
        QFETCH(QString, type);
        QFETCH(double, tolerance);
        auto model = test_helpers::load_model(synth("gate-" + type + ".gguf", {"--type", type}));
        const std::vector<int32_t> ids = prompt();
        const auto [worst, batch, single] = batch_and_single(model, ids);
        qInfo("%s: largest |Δ logit| %.2g", qPrintable(type), worst);
        QVERIFY2(worst <= tolerance, qPrintable(QString::number(worst)));
        // One token at a time skipped the neurons whose gate did not fire (random weights: some
        // of them), and no expert it was not routed to.
        const auto layers = single->layer_sparsity();
        QCOMPARE(int(layers.size()), 2);
        for (const ember::LayerSparsity& l : layers) {
            QCOMPARE(l.n_ff, 8 * 768);
            QCOMPARE(l.tokens, int64_t(ids.size()));
            const double routed = double(l.tokens) * 2 * 768;
            QVERIFY2(l.active > 0 && l.active < 0.95 * routed, qPrintable(QString::number(l.active / routed)));
            QVERIFY(l.bytes_read > 0);
        }
        // The batch computed whole experts wherever two or more of its tokens met.
        for (size_t il = 0; il < layers.size(); ++il) QVERIFY(batch->layer_sparsity()[il].active > layers[il].active);
    }

    // PowerInfer stores each expert's down weights transposed (a row per neuron), so a token
    // reads only its active neurons' rows; the same weights in either layout give the same text.
    void both_down_layouts_write_the_same_text() {
        auto upstream_layout = test_helpers::load_model(synth("down.gguf", {"--type", "F16"}));
        auto transposed = test_helpers::load_model(synth("down-t.gguf", {"--type", "F16", "--down-t"}));
        ember::SessionParams sp;
        sp.n_ctx = 128;
        sp.n_threads = 2;
        const std::vector<int32_t> want = greedy_text(upstream_layout, sp);
        QCOMPARE(int(want.size()), kGreedy);
        QCOMPARE(greedy_text(transposed, sp), want);
        // And whole: a batch sums the transposed rows too.
        auto a = test_helpers::open_session(upstream_layout, 64, 2), b = test_helpers::open_session(transposed, 64, 2);
        QVERIFY(a->evaluate(prompt(), true).ok() && b->evaluate(prompt(), true).ok());
        double worst = 0;
        for (int32_t t = 0; t < kPromptTokens; ++t) worst = std::max(worst, max_abs_difference(a->logits(t), b->logits(t)));
        // Upstream's layout multiplies the activations rounded to F16, as GGML does with F16
        // weights; the transposed rows are scaled by the F32 activations.
        qInfo("largest |Δ logit| between the layouts: %.2g", worst);
        QVERIFY(worst < 0.05);
    }

    // Upstream's layout laid out by neuron at load (ModelParams::experts_by_neuron) is
    // PowerInfer's: F16 rows transposed exactly, so every logit equals the file stored that way,
    // one token at a time and as a batch.
    void experts_by_neuron_are_powerinfers_layout() {
        ember::ModelParams by_neuron;
        by_neuron.experts_by_neuron = true;
        auto relaid = test_helpers::load_model(synth("by-neuron.gguf", {"--type", "F16"}), by_neuron);
        auto stored = test_helpers::load_model(synth("by-neuron-t.gguf", {"--type", "F16", "--down-t"}));
        const std::vector<int32_t> ids = prompt();
        auto a = test_helpers::open_session(relaid, 64, 2), b = test_helpers::open_session(stored, 64, 2);
        QVERIFY(a->evaluate(ids, true).ok() && b->evaluate(ids, true).ok());
        for (int32_t t = 0; t < kPromptTokens; ++t) QCOMPARE(max_abs_difference(a->logits(t), b->logits(t)), 0.0);
        for (int32_t t = 0; t < 4; ++t) {
            QVERIFY(a->evaluate(std::span(&ids[size_t(t)], 1)).ok() && b->evaluate(std::span(&ids[size_t(t)], 1)).ok());
            QCOMPARE(max_abs_difference(a->logits(), b->logits()), 0.0);
        }
        // One token reads the down rows of its fired neurons only, where upstream's layout reads
        // every expert's down whole: fewer bytes for the same tokens.
        auto whole = test_helpers::load_model(dir_.path() + "/by-neuron.gguf");
        auto c = test_helpers::open_session(whole, 64, 2), d = test_helpers::open_session(relaid, 64, 2);
        uint64_t bytes_whole = 0, bytes_by_neuron = 0;
        for (int32_t t = 0; t < 4; ++t)
            QVERIFY(c->evaluate(std::span(&ids[size_t(t)], 1)).ok() && d->evaluate(std::span(&ids[size_t(t)], 1)).ok());
        for (const ember::LayerSparsity& l : c->layer_sparsity()) bytes_whole += l.bytes_read;
        for (const ember::LayerSparsity& l : d->layer_sparsity()) bytes_by_neuron += l.bytes_read;
        QVERIFY2(bytes_by_neuron < bytes_whole, qPrintable(QString("%1 against %2").arg(bytes_by_neuron).arg(bytes_whole)));
        // A mapped file keeps its pages as stored: the load says what it needs.
        by_neuron.use_mmap = true;
        const QString path = dir_.path() + "/by-neuron.gguf";
        auto mapped = ember::Model::load(path.toStdString(), by_neuron);
        QVERIFY(!mapped);
        QVERIFY2(mapped.error().message.find(path.toStdString()) != std::string::npos &&
                     mapped.error().message.find("--mmap") != std::string::npos,
                 mapped.error().message.c_str());
    }

    // A down of fewer bytes per weight than Q4_0's relaid rows' share (Q6_K) is rewritten in place,
    // each expert over bytes no later expert is read from: the relaid model stays within the
    // second rounding of the stored one, where an expert overwritten before it was read would
    // move the logits by far more.
    void experts_by_neuron_rewrite_a_k_quant_in_place() {
        const QString path = synth("by-neuron-q6_k.gguf", {"--type", "Q6_K"});
        ember::ModelParams by_neuron;
        by_neuron.experts_by_neuron = true;
        auto relaid = test_helpers::load_model(path, by_neuron);
        auto stored = test_helpers::load_model(path);
        const std::vector<int32_t> ids = prompt();
        auto a = test_helpers::open_session(relaid, 64, 2), b = test_helpers::open_session(stored, 64, 2);
        double worst = 0.0, scale = 0.0;
        int same_top = 0;
        const auto top = [](std::span<const float> l) { return std::max_element(l.begin(), l.end()) - l.begin(); };
        for (const int32_t token : ids) {
            QVERIFY(a->evaluate(std::span(&token, 1)).ok() && b->evaluate(std::span(&token, 1)).ok());
            worst = std::max(worst, max_abs_difference(a->logits(), b->logits()));
            for (float v : b->logits()) scale = std::max(scale, double(std::fabs(v)));
            same_top += top(a->logits()) == top(b->logits());
        }
        qInfo("largest |Δ logit| %.3g of logits up to %.3g; same top token %d of %d", worst, scale, same_top, int(ids.size()));
        QVERIFY2(worst < 0.15 * scale, qPrintable(QString("%1 of %2").arg(worst).arg(scale)));
        QVERIFY2(same_top >= int(ids.size()) - 2, qPrintable(QString::number(same_top)));
    }

    // A batch reads each transposed Q4_0 row once for up to eight of an expert's tokens; every
    // token's output is still its own sum. 40 tokens over 8 experts, 2 each: groups of eight and
    // a remainder. One token at a time runs gate first, the batch whole experts, whose gate and
    // up products run on AMX tiles from 16 tokens on where the CPU has them and round
    // differently (by up to 0.09 here, upstream's layout as much); a token given another
    // token's sum moves the logits by more than 2.
    void transposed_q4_0_rows_serve_a_batch() {
        auto model = test_helpers::load_model(synth("down-t-q4_0.gguf", {"--type", "Q4_0", "--down-t"}));
        const auto [worst, batch, single] = batch_and_single(model, prompt(40));
        qInfo("largest |Δ logit| %.2g", worst);
        QVERIFY2(worst <= 0.25, qPrintable(QString::number(worst)));
        int64_t most = 0;
        const std::vector<ember::LayerSparsity> layers = batch->layer_sparsity();
        for (int64_t n : layers[0].expert_tokens) most = std::max(most, n);
        QVERIFY2(most > 8, "no expert met more than eight of the prompt's tokens");
    }

    // With a device, attention and the LM head go first, then the experts in what is left: whole
    // experts in upstream's layout, each running there whole for the tokens routed to it; single
    // neurons in PowerInfer's (down transposed, a row per neuron), a token's fired neurons the
    // device holds running there while the CPU computes the rest. The text is the CPU's at
    // every budget (none, some and all of the experts resident), the slider's re-plans included.
    void sim_device_writes_the_cpu_text_data() {
        QTest::addColumn<bool>("transposed");
        QTest::addColumn<bool>("by_neuron");
        QTest::newRow("whole experts, upstream's layout") << false << false;
        QTest::newRow("single neurons, PowerInfer's layout") << true << false;
        QTest::newRow("single neurons, upstream's layout laid out by neuron") << true << true;
    }
    void sim_device_writes_the_cpu_text() {
        QFETCH(bool, transposed);
        QFETCH(bool, by_neuron);
        QStringList args{"--type", "Q4_0"};
        if (transposed && !by_neuron) args << "--down-t";
        ember::ModelParams mp;
        mp.experts_by_neuron = by_neuron;
        auto model = test_helpers::load_model(synth(by_neuron ? "sim-by-neuron.gguf" : transposed ? "sim-down-t.gguf" : "sim.gguf", args), mp);
        ember::SessionParams sp;
        sp.n_ctx = 128;
        sp.n_threads = 2;
        const std::vector<int32_t> want = greedy_text(model, sp);
        sp.device = "sim";
        const int64_t all = 2 * 8 * 768;
        std::vector<int64_t> resident;
        const std::vector<uint64_t> budgets{uint64_t(1) << 20, kPartialBudget, uint64_t(64) << 20};
        for (const uint64_t budget : budgets) {
            sp.device_budget_bytes = budget;
            auto session = ember::Session::create(model, sp);
            QVERIFY(session.ok());
            QCOMPARE(greedy_text(**session), want);
            const ember::DeviceReport report = (*session)->device_report();
            QVERIFY(report.used_bytes <= budget);
            resident.push_back(report.hot_neurons);
            // The split view's neurons: expert e's are e·768.. of its layer's 6144.
            int64_t listed = 0, on_device = 0, computed = 0;
            for (const auto& layer : (*session)->hot_neurons()) {
                listed += int64_t(layer.size());
                QVERIFY(std::is_sorted(layer.begin(), layer.end()));
                for (int32_t id : layer) QVERIFY(id >= 0 && id < 8 * 768);
            }
            QCOMPARE(listed, report.hot_neurons);
            for (const ember::LayerSparsity& l : (*session)->layer_sparsity()) {
                on_device += l.active_on_device;
                computed += l.active;
                QVERIFY(l.bytes_read_on_device <= l.bytes_read);
            }
            QCOMPARE(on_device > 0, report.hot_neurons > 0);
            // Gate first, one token at a time: only fired neurons run, on whichever side holds them.
            if (transposed) QVERIFY(on_device < computed);
        }
        QCOMPARE(resident[0], int64_t(0));
        QVERIFY2(resident[1] > 0 && resident[1] < all, qPrintable(QString::number(resident[1])));
        QCOMPARE(resident[2], all);

        sp.device_budget_bytes = budgets[2];
        auto session = ember::Session::create(model, sp);
        QVERIFY(session.ok());
        for (size_t i : {1, 0, 2, 1}) {
            QVERIFY((*session)->set_device_budget(budgets[i]).ok());
            QCOMPARE((*session)->device_report().hot_neurons, resident[i]);
            (*session)->clear();
            QCOMPARE(greedy_text(**session), want);
        }
    }

    // A token's experts on the device cost it two round trips a layer, however many of them the
    // device holds: their gate and up products go together (the CPU's experts run meanwhile),
    // then their downs. Every expert resident (upstream's layout, whole experts), one token after
    // a prompt: a layer's attention sub-layer is one more round trip, the LM head one.
    void a_token_waits_for_its_experts_twice_a_layer() {
        auto model = test_helpers::load_model(synth("trips.gguf", {"--type", "Q4_0"}));
        ember::SessionParams sp;
        sp.n_ctx = 128;
        sp.n_threads = 2;
        sp.device = "sim";
        sp.device_budget_bytes = uint64_t(64) << 20;
        auto created = ember::Session::create(model, sp);
        QVERIFY(created.ok());
        ember::Session& session = **created;
        QCOMPARE(session.device_report().hot_neurons, int64_t(2 * 8 * 768));
        const std::vector<int32_t> ids = prompt();
        QVERIFY(session.evaluate(ids).ok());
        const ember::DeviceReport before = session.device_report();
        QVERIFY(session.evaluate(std::span(&ids[0], 1)).ok());
        const ember::DeviceReport after = session.device_report();
        QCOMPARE(after.attention_sublayers - before.attention_sublayers, uint64_t(2));
        QVERIFY2(after.dense.find("the LM head") != std::string::npos, after.dense.c_str());
        QCOMPARE(after.round_trips - before.round_trips, uint64_t(2 * 2 + 2 + 1));
    }

    // The split sums what the CPU sums, in another order: one token at a time, the logits of a
    // session holding some of the neurons on the sim device stay within rounding of the CPU's.
    void split_experts_compute_what_the_cpu_does() {
        auto model = test_helpers::load_model(synth("split-down-t.gguf", {"--type", "Q4_0", "--down-t"}));
        auto cpu = test_helpers::open_session(model, 64, 2);
        auto split = partial_device_session(model);
        int64_t on_device = 0;
        double worst = 0.0;
        for (const int32_t token : prompt()) {
            QVERIFY(cpu->evaluate(std::span(&token, 1)).ok() && split->evaluate(std::span(&token, 1)).ok());
            worst = std::max(worst, max_abs_difference(cpu->logits(), split->logits()));
        }
        for (const ember::LayerSparsity& l : split->layer_sparsity()) on_device += l.active_on_device;
        qInfo("largest |Δ logit| %.2g, %lld neurons computed on the device", worst, static_cast<long long>(on_device));
        QVERIFY(on_device > 0);
        QVERIFY2(worst < 1e-3, qPrintable(QString::number(worst)));
    }

    // Re-planning puts the neurons that fired most so far on the device: without a profile, each
    // held neuron fired at least as often in this session as each one left on the CPU.
    void replanning_keeps_the_neurons_that_fired_most() {
        auto model = test_helpers::load_model(synth("fires-down-t.gguf", {"--type", "Q4_0", "--down-t"}));
        auto session = partial_device_session(model);
        greedy_text(*session);
        QVERIFY(session->set_device_budget(kPartialBudget).ok());
        const auto fires = session->expert_neuron_fires();
        const auto hot = session->hot_neurons();
        QCOMPARE(int(fires.size()), 2);
        uint32_t least_resident = UINT32_MAX, most_left = 0;
        int64_t n_resident = 0;
        for (size_t il = 0; il < 2; ++il) {
            QCOMPARE(int(fires[il].size()), 8 * 768);
            std::vector<bool> on(8 * 768, false);
            for (int32_t id : hot[il]) on[size_t(id)] = true;
            for (size_t id = 0; id < on.size(); ++id) {
                if (on[id]) {
                    least_resident = std::min(least_resident, fires[il][id]);
                    ++n_resident;
                } else {
                    most_left = std::max(most_left, fires[il][id]);
                }
            }
        }
        QVERIFY2(n_resident > 0 && n_resident < 2 * 8 * 768, qPrintable(QString::number(n_resident)));
        QVERIFY2(least_resident >= most_left, qPrintable(QString("%1 < %2").arg(least_resident).arg(most_left)));
        QVERIFY(most_left > 0 || least_resident > 0);
    }

    // --expert-memory: everything but the experts, and the experts the profile says are used
    // most within the budget, live in the process's own memory; the other experts stay pages of
    // the file, read when routed. The text is the one of the model loaded whole, at every budget.
    void experts_kept_partly_on_disk_write_the_same_text() {
        const QString path = synth("on-disk.gguf", {"--type", "Q4_0", "--down-t"});
        ember::SessionParams sp;
        sp.n_ctx = 128;
        sp.n_threads = 2;
        const std::vector<int32_t> want = greedy_text(test_helpers::load_model(path), sp);

        // Layer 1's experts 6 and 7 and layer 0's expert 2 are used most.
        ember::sparse::ExpertProfile profile;
        profile.model_bytes = file_bytes(path);
        profile.n_tokens = 1000;
        profile.share = {{0.2f, 0.2f, 0.5f, 0.2f, 0.2f, 0.2f, 0.2f, 0.3f}, {0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.7f, 0.7f}};
        ember::sparse::write_expert_profile(ember::sparse::default_expert_profile_path(path.toStdString()), profile);

        // Read, not mapped: the file's only mappings are then the model's.
        auto file = ember::gguf::File::open(path.toStdString(), ember::gguf::MappedFile::Mode::Copy);
        const uint64_t expert = 3 * 768 * 144;  // gate, up and down: 768 Q4_0 rows of 256 each
        // Expert e of layer il's three slices, as file offsets.
        const auto slices = [&](int il, int e) {
            std::vector<std::pair<uint64_t, uint64_t>> out;
            for (const char* part : {"gate", "up", "down"}) {
                const ember::gguf::TensorInfo* t =
                    file->find_tensor("blk." + std::to_string(il) + ".ffn_" + part + "_exps.weight");
                const uint64_t begin = file->data_offset() + t->offset + uint64_t(e) * (t->nbytes / 8);
                out.emplace_back(begin, begin + t->nbytes / 8);
            }
            return out;
        };
        for (const uint64_t budget : {uint64_t(0), 3 * expert + expert / 2, 16 * expert}) {
            ember::ModelParams mp;
            mp.expert_memory_bytes = budget;
            auto loaded = ember::Model::load(path.toStdString(), mp);
            QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message.c_str());
            const ember::ModelInfo& info = (*loaded)->info();
            QCOMPARE(info.expert_bytes, 16 * expert);
            QCOMPARE(info.expert_bytes_in_memory, std::min<uint64_t>(budget / expert, 16) * expert);
            QVERIFY2(info.expert_memory_order.find("by " + ember::sparse::default_expert_profile_path(path.toStdString())) !=
                         std::string::npos,
                     info.expert_memory_order.c_str());
            const FileMappings mapped = file_mappings(path);
            int on_disk = 0;
            for (int il = 0; il < 2; ++il)
                for (int e = 0; e < 8; ++e) {
                    bool from_file = true;
                    for (const auto& [begin, end] : slices(il, e)) from_file = from_file && mapped.holds(begin, end);
                    on_disk += from_file;
                    if (budget == 3 * expert + expert / 2) {
                        const bool most_used = (il == 1 && e >= 6) || (il == 0 && e == 2);
                        QVERIFY2(from_file != most_used, qPrintable(QString("layer %1 expert %2").arg(il).arg(e)));
                    }
                }
            QCOMPARE(uint64_t(16 - on_disk) * expert, info.expert_bytes_in_memory);
            // Nothing else stays in the file: attention, norms, the embeddings and the LM head.
            const ember::gguf::TensorInfo* wq = file->find_tensor("blk.0.attn_q.weight");
            QVERIFY(!mapped.holds(file->data_offset() + wq->offset, file->data_offset() + wq->offset + wq->nbytes));
            QCOMPARE(greedy_text(*loaded, sp), want);
        }

        auto dense = ember::Model::load(kData.toStdString() + "/tiny-relu-llama/model.dense.q4_0.gguf",
                                        [] { ember::ModelParams mp; mp.expert_memory_bytes = 0; return mp; }());
        QVERIFY(!dense.ok());
        QVERIFY2(dense.error().message.find("model.dense.q4_0.gguf") != std::string::npos &&
                     dense.error().message.find("no experts") != std::string::npos,
                 dense.error().message.c_str());
    }

    // A profile with neuron counts orders a fresh session's resident neurons across layers and
    // experts: every neuron held is expected to fire (its expert's share times its own rate) at
    // least as often as every neuron left on the CPU.
    void a_profile_orders_the_resident_neurons() {
        const QString model_path = synth("neuron-order.gguf", {"--type", "Q4_0", "--down-t"});
        auto model = test_helpers::load_model(model_path);
        ember::sparse::ExpertProfile profile;
        profile.model_bytes = file_bytes(model_path);
        profile.n_tokens = 1000;
        profile.share = {{0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.6f, 0.8f}, {0.4f, 0.4f, 0.2f, 0.2f, 0.2f, 0.2f, 0.2f, 0.2f}};
        for (int il = 0; il < 2; ++il) {
            std::vector<float>& fire = profile.fire.emplace_back(8 * 768);
            for (int id = 0; id < 8 * 768; ++id) fire[size_t(id)] = float((id * 7919 + il * 31) % 1000 + 1) / 1001.0f;
        }
        ember::sparse::write_expert_profile(ember::sparse::default_expert_profile_path(model_path.toStdString()), profile);
        auto session = partial_device_session(model);
        const auto hot = session->hot_neurons();
        double least_resident = INFINITY, most_left = 0.0;
        int64_t n_resident = 0;
        for (size_t il = 0; il < 2; ++il) {
            std::vector<bool> on(8 * 768, false);
            for (int32_t id : hot[il]) on[size_t(id)] = true;
            for (size_t id = 0; id < on.size(); ++id) {
                const double expected = double(profile.share[il][id / 768]) * double(profile.fire[il][id]);
                if (on[id]) {
                    least_resident = std::min(least_resident, expected);
                    ++n_resident;
                } else {
                    most_left = std::max(most_left, expected);
                }
            }
        }
        QVERIFY2(n_resident > 0 && n_resident < 2 * 8 * 768, qPrintable(QString::number(n_resident)));
        QVERIFY2(least_resident >= most_left, qPrintable(QString("%1 < %2").arg(least_resident).arg(most_left)));
        // The profile's neuron counts round-trip.
        const ember::sparse::ExpertProfile back = ember::sparse::read_expert_profile(
            ember::sparse::default_expert_profile_path(model_path.toStdString()), 2, 8, 2, 768, profile.model_bytes);
        QCOMPARE(back.fire, profile.fire);
    }

    // Re-planning puts the experts used most so far on the device: every resident expert was
    // routed at least as many tokens as any expert left on the CPU.
    void replanning_keeps_the_most_used_experts() {
        auto model = test_helpers::load_model(synth("uses.gguf", {"--type", "Q4_0"}));
        auto session = partial_device_session(model);
        greedy_text(*session);
        QVERIFY(session->set_device_budget(kPartialBudget).ok());
        const auto layers = session->layer_sparsity();
        std::vector<std::vector<bool>> resident(layers.size(), std::vector<bool>(8, false));
        const auto hot = session->hot_neurons();
        for (size_t il = 0; il < hot.size(); ++il)
            for (int32_t id : hot[il]) resident[il][size_t(id / 768)] = true;
        int64_t least_resident = INT64_MAX, most_left = -1, n_resident = 0;
        for (size_t il = 0; il < layers.size(); ++il) {
            QCOMPARE(int(layers[il].expert_tokens.size()), 8);
            int64_t routed = 0;
            for (size_t e = 0; e < 8; ++e) {
                const int64_t uses = layers[il].expert_tokens[e];
                routed += uses;
                if (resident[il][e]) {
                    least_resident = std::min(least_resident, uses);
                    ++n_resident;
                } else {
                    most_left = std::max(most_left, uses);
                }
            }
            QCOMPARE(routed, layers[il].tokens * 2);  // two experts per token
        }
        QVERIFY(n_resident > 0 && n_resident < 16);
        QVERIFY2(least_resident >= most_left, qPrintable(QString("%1 < %2").arg(least_resident).arg(most_left)));
    }

    // ember-calibrate's routing profile holds, per layer, the share of the text's tokens the
    // router sent to each expert: counted here from the router's own logits (top 2 of 8, which
    // the softmax does not reorder) over the same 128-token chunks. And, per neuron, the share
    // of its expert's tokens for which it fired: counted here from the experts' input and the
    // file's own F32 gate rows, in double precision (a ReLU expert's neuron fires where its gate
    // product is above 0).
    void calibrate_writes_the_routing_profile() {
        const QString model_path = synth("profiled.gguf", {"--type", "F32"});
        QProcess p;
        p.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-calibrate",
                {"-m", model_path, "-f", kData + "/tiny-relu-llama/val.txt", "-c", "128", "--max-tokens", "512", "-t", "2"});
        QVERIFY(p.waitForFinished(300000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
        const QString profile_path = dir_.path() + "/profiled.experts.gguf";
        const ember::sparse::ExpertProfile profile =
            ember::sparse::read_expert_profile(profile_path.toStdString(), 2, 8, 2, 768, file_bytes(model_path));
        QCOMPARE(profile.n_tokens, uint64_t(512));
        QCOMPARE(int(profile.fire.size()), 2);

        auto model = test_helpers::load_model(model_path);
        auto file = ember::gguf::File::open(model_path.toStdString());
        std::vector<const float*> gates;
        for (int il = 0; il < 2; ++il) {
            const ember::gguf::TensorInfo* t = file->find_tensor("blk." + std::to_string(il) + ".ffn_gate_exps.weight");
            QVERIFY(t && t->ne == (std::vector<int64_t>{256, 768, 8}));
            gates.push_back(reinterpret_cast<const float*>(t->data));
        }
        QFile text(kData + "/tiny-relu-llama/val.txt");
        QVERIFY(text.open(QIODevice::ReadOnly));
        std::vector<int32_t> tokens = model->tokenize(text.readAll().toStdString(), model->add_bos());
        tokens.resize(512);
        ember::SessionParams sp;
        sp.n_ctx = 128;
        sp.n_threads = 2;
        auto session = ember::Session::create(model, sp);
        QVERIFY(session.ok());
        std::vector<std::vector<int64_t>> routed(2, std::vector<int64_t>(8, 0)), fired(2, std::vector<int64_t>(8 * 768, 0));
        std::vector<std::vector<std::array<int32_t, 2>>> routes(2);  // this chunk's, per layer and token
        (*session)->set_intermediate_callback([&](const ember::Intermediate& im) {
            if (im.name == "ffn_moe_logits") {
                routes[size_t(im.layer)].clear();
                for (int32_t t = 0; t < im.n_tokens; ++t) {
                    const float* logits = im.data + size_t(t) * size_t(im.n_cols);
                    std::vector<int32_t> order{0, 1, 2, 3, 4, 5, 6, 7};
                    std::partial_sort(order.begin(), order.begin() + 2, order.end(),
                                      [&](int32_t a, int32_t b) { return logits[a] > logits[b]; });
                    ++routed[size_t(im.layer)][size_t(order[0])];
                    ++routed[size_t(im.layer)][size_t(order[1])];
                    routes[size_t(im.layer)].push_back({order[0], order[1]});
                }
            } else if (im.name == "ffn_norm") {  // the experts' input
                for (int32_t t = 0; t < im.n_tokens; ++t) {
                    const float* x = im.data + size_t(t) * 256;
                    for (int32_t e : routes[size_t(im.layer)][size_t(t)])
                        for (int32_t i = 0; i < 768; ++i) {
                            const float* row = gates[size_t(im.layer)] + (size_t(e) * 768 + size_t(i)) * 256;
                            double g = 0.0;
                            for (int j = 0; j < 256; ++j) g += double(row[j]) * double(x[j]);
                            fired[size_t(im.layer)][size_t(e) * 768 + size_t(i)] += g > 0.0;
                        }
                }
            }
        });
        for (size_t c = 0; c < tokens.size(); c += 128) {
            (*session)->clear();
            QVERIFY((*session)->evaluate(std::span<const int32_t>(tokens).subspan(c, 128)).ok());
        }
        int64_t differing = 0;
        for (size_t il = 0; il < 2; ++il)
            for (size_t e = 0; e < 8; ++e) {
                QCOMPARE(qRound64(profile.share[il][e] * 512.0), routed[il][e]);
                for (size_t i = 0; i < 768; ++i) {
                    const size_t id = e * 768 + i;
                    const int64_t counted = routed[il][e] ? qRound64(profile.fire[il][id] * double(routed[il][e])) : 0;
                    // A gate product within rounding of 0 may fall on either side; one token at most.
                    QVERIFY2(std::llabs(counted - fired[il][id]) <= 1,
                             qPrintable(QString("layer %1 neuron %2: %3 against %4").arg(il).arg(id).arg(counted).arg(fired[il][id])));
                    differing += counted != fired[il][id];
                }
            }
        qInfo("neurons whose count is off by one: %lld of %d", static_cast<long long>(differing), 2 * 8 * 768);
        QVERIFY(differing <= 8);
    }

    // A fresh session holds the experts its model's profile says are used most, whichever layer
    // they are in; a profile of another file is named in the report and orders nothing.
    void a_profile_orders_a_fresh_sessions_experts() {
        const QString model_path = synth("ordered.gguf", {"--type", "Q4_0"});
        auto model = test_helpers::load_model(model_path);
        const std::vector<std::vector<bool>> unprofiled = resident_experts(*partial_device_session(model));
        int n_resident = 0;
        for (const auto& layer : unprofiled) n_resident += int(std::count(layer.begin(), layer.end(), true));
        QVERIFY2(n_resident > 0 && n_resident < 16, qPrintable(QString::number(n_resident)));
        QVERIFY2(unprofiled[0][0] && !unprofiled[1][7], "without a profile, experts go layer by layer");

        // Two experts per layer taken by most tokens, layer 1's the most; each layer's shares sum
        // to the two experts a token uses.
        ember::sparse::ExpertProfile profile;
        profile.model_bytes = file_bytes(model_path);
        profile.n_tokens = 1000;
        profile.share = {{0.7f / 6, 0.7f / 6, 0.7f / 6, 0.7f / 6, 0.7f / 6, 0.7f / 6, 0.6f, 0.7f},
                         {0.05f, 0.05f, 0.05f, 0.05f, 0.05f, 0.05f, 0.8f, 0.9f}};
        const std::string profile_path = ember::sparse::default_expert_profile_path(model_path.toStdString());
        ember::sparse::write_expert_profile(profile_path, profile);

        auto session = partial_device_session(model);
        const std::string used = session->device_report().expert_profile;
        QVERIFY2(used.find("ordered by " + profile_path) != std::string::npos, used.c_str());
        std::vector<std::pair<int32_t, int32_t>> by_share;  // (layer, expert), most used first
        for (int32_t il = 0; il < 2; ++il)
            for (int32_t e = 0; e < 8; ++e) by_share.emplace_back(il, e);
        std::stable_sort(by_share.begin(), by_share.end(), [&](const auto& a, const auto& b) {
            return profile.share[size_t(a.first)][size_t(a.second)] > profile.share[size_t(b.first)][size_t(b.second)];
        });
        const std::vector<std::vector<bool>> profiled = resident_experts(*session);
        for (int rank = 0; rank < 16; ++rank) {
            const auto [il, e] = by_share[size_t(rank)];
            QVERIFY2(profiled[size_t(il)][size_t(e)] == (rank < n_resident),
                     qPrintable(QString("layer %1 expert %2, rank %3 of %4 resident").arg(il).arg(e).arg(rank).arg(n_resident)));
        }
        QVERIFY(profiled[1][7] && !unprofiled[1][7]);

        profile.model_bytes += 1;
        ember::sparse::write_expert_profile(profile_path, profile);
        session = partial_device_session(model);
        const std::string note = session->device_report().expert_profile;
        QVERIFY2(note.find("not used") != std::string::npos && note.find(profile_path) != std::string::npos, note.c_str());
        QCOMPARE(resident_experts(*session), unprofiled);
    }
};

QTEST_GUILESS_MAIN(TestExperts)
#include "tst_experts.moc"

// The Hub browser's fit badge: a model's footprint read from the first bytes of its file (as an
// HTTP Range request fetches them) equals the one read from the whole file, and the placement
// solver's answer moves from CPU only through hybrid to all on GPU as the budget grows.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>
#include <fstream>

#include "ember/fit.h"
#include "ember/model.h"
#include "ember/session.h"
#include "gguf/gguf_writer.h"

namespace {

const std::string kSparse = std::string(EMBER_TEST_DATA_DIR) + "/tiny-relu-llama/model.q4_0.powerinfer.gguf";
const std::string kDense = std::string(EMBER_TEST_DATA_DIR) + "/tiny-relu-llama/model.dense.q4_0.gguf";

// The first n bytes of `path` in a file of its own.
std::string prefix(const QTemporaryDir& dir, const std::string& path, size_t n) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes(n, '\0');
    in.read(bytes.data(), std::streamsize(n));
    bytes.resize(size_t(in.gcount()));
    const std::string out = dir.path().toStdString() + "/head-" + std::to_string(n) + ".gguf";
    std::ofstream(out, std::ios::binary) << bytes;
    return out;
}

// A one-layer model header: `arch`'s keys, one [256, 2] weight of GGUF type `type`, and the
// tokenizer keys given.
std::string small_gguf(const QTemporaryDir& dir, const std::string& name, const std::string& arch, uint32_t type,
                       const std::string& tokenizer, const std::string& pre, uint32_t key_length = 0, uint32_t n_rot = 0) {
    using ember::gguf::Value;
    ember::gguf::Writer w;
    w.set("general.architecture", Value::string(arch));
    for (const char* key : {"block_count", "context_length", "embedding_length", "attention.head_count", "feed_forward_length"})
        w.set(arch + "." + key, Value::u32(key == std::string("block_count") ? 1 : 256));
    if (key_length > 0) w.set(arch + ".attention.key_length", Value::u32(key_length));
    if (n_rot > 0) w.set(arch + ".rope.dimension_count", Value::u32(n_rot));
    w.set("tokenizer.ggml.model", Value::string(tokenizer));
    if (!pre.empty()) w.set("tokenizer.ggml.pre", Value::string(pre));
    const size_t bytes = type == 16 ? 2 * 66 : type == 12 ? 2 * 144 : 2 * 256 * 4;  // IQ2_XXS, Q4_K, F32
    w.add_tensor("blk.0.ffn_up.weight", {256, 2}, type, std::vector<uint8_t>(bytes));
    const std::string path = dir.path().toStdString() + "/" + name + ".gguf";
    w.write(path);
    return path;
}

}  // namespace

class TestFitEstimate : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

private slots:
    void header_alone_gives_the_same_footprint() {
        const uint64_t size = std::filesystem::file_size(kSparse);
        auto whole = ember::read_footprint(kSparse, 0);
        QVERIFY2(whole.ok(), whole.ok() ? "" : whole.error().message.c_str());
        const size_t head_bytes = 512 * 1024;
        QVERIFY(head_bytes < size);  // a real prefix, not the whole file
        auto head = ember::read_footprint(prefix(dir_, kSparse, head_bytes), size);
        QVERIFY2(head.ok(), head.ok() ? "" : head.error().message.c_str());
        QCOMPARE(head->weight_bytes, whole->weight_bytes);
        QCOMPARE(head->attn_bytes, whole->attn_bytes);
        QCOMPARE(head->neuron_bytes, whole->neuron_bytes);
        QCOMPARE(head->output_bytes, whole->output_bytes);
        QVERIFY(head->sparse);

        // The engine agrees on what loading reads, and on the shape.
        auto model = ember::Model::load(kSparse);
        QVERIFY(model.ok());
        QCOMPARE(head->weight_bytes, (*model)->info().weight_bytes);
        QCOMPARE(head->n_layer, (*model)->info().n_layer);
        // One neuron: gate, up and down_t rows of n_embd Q4_0 values.
        QCOMPARE(head->neuron_bytes[0], uint64_t(3 * (*model)->info().n_embd / 32 * 18));
    }

    // 256 heads over n_embd 256: one dimension each, unless key_length says wider (Qwen 3).
    void kv_cache_size_follows_the_heads_width() {
        auto narrow = ember::read_footprint(small_gguf(dir_, "narrow", "qwen3", 12, "gpt2", "qwen2"), 0);
        auto wide = ember::read_footprint(small_gguf(dir_, "wide", "qwen3", 12, "gpt2", "qwen2", 8), 0);
        QVERIFY(narrow.ok() && wide.ok());
        QCOMPARE(narrow->kv_bytes_per_token, uint64_t(2 * 256 * 1 * 2));  // K and V, F16, one layer
        QCOMPARE(wide->kv_bytes_per_token, uint64_t(2 * 256 * 8 * 2));
    }

    // Phi-4-mini rotates 96 of its 128 head dimensions; the loader refuses that, so does the badge.
    void partial_rope_cannot_run() {
        auto partial = ember::read_footprint(small_gguf(dir_, "partial", "phi3", 12, "llama", "", 8, 6), 0);
        QVERIFY(partial.ok());
        QCOMPARE(QString::fromStdString(partial->cannot_run),
                 QStringLiteral("RoPE on part of each head (6 of 8 dimensions) is not supported"));
        auto whole = ember::read_footprint(small_gguf(dir_, "whole", "phi3", 12, "llama", "", 8, 8), 0);
        QVERIFY(whole.ok());
        QCOMPARE(QString::fromStdString(whole->cannot_run), QString());
    }

    // What the loader would refuse, said from the header before any download, in plain words;
    // nothing for a file it runs.
    void a_file_the_engine_cannot_run_says_why_data() {
        QTest::addColumn<QString>("arch");
        QTest::addColumn<uint32_t>("type");
        QTest::addColumn<QString>("tokenizer");
        QTest::addColumn<QString>("pre");
        QTest::addColumn<QString>("why");  // empty: runnable
        QTest::newRow("runnable") << "qwen2" << 12u << "gpt2" << "qwen2" << "";
        QTest::newRow("architecture") << "gemma3n" << 12u << "llama" << "" << "architecture gemma3n is not supported";
        QTest::newRow("weight type") << "llama" << 16u << "llama" << ""
                                     << "IQ2_XXS weights are not supported (tensor blk.0.ffn_up.weight)";
        QTest::newRow("tokenizer") << "llama" << 0u << "bert" << "" << "tokenizer bert is not supported";
        QTest::newRow("pre-tokenizer") << "llama" << 0u << "gpt2" << "chatglm-bpe" << "pre-tokenizer chatglm-bpe is not supported";
    }
    void a_file_the_engine_cannot_run_says_why() {
        QFETCH(QString, arch);
        QFETCH(uint32_t, type);
        QFETCH(QString, tokenizer);
        QFETCH(QString, pre);
        QFETCH(QString, why);
        const std::string path = small_gguf(dir_, QTest::currentDataTag(), arch.toStdString(), type, tokenizer.toStdString(),
                                           pre.toStdString());
        auto fp = ember::read_footprint(path, 0);
        QVERIFY2(fp.ok(), fp.ok() ? "" : fp.error().message.c_str());
        QCOMPARE(QString::fromStdString(fp->cannot_run), why);
        const ember::Fit fit = ember::estimate_fit(*fp, {});
        if (why.isEmpty()) {
            QCOMPARE(fit.kind, ember::FitKind::CpuOnly);
        } else {
            QCOMPARE(fit.kind, ember::FitKind::CannotRun);
            QCOMPARE(QString::fromStdString(fit.text), "can't run yet: " + why);
        }
    }

    void a_header_cut_short_is_an_error_naming_the_file() {
        const std::string head = prefix(dir_, kSparse, 200);
        auto fp = ember::read_footprint(head, std::filesystem::file_size(kSparse));
        QVERIFY(!fp.ok());
        QVERIFY2(QString::fromStdString(fp.error().message).contains(QString::fromStdString(head)), fp.error().message.c_str());
    }

    void budget_moves_the_split() {
        auto fp = ember::read_footprint(kSparse, 0);
        QVERIFY(fp.ok());
        ember::FitQuery q;
        q.ram_bytes = uint64_t(1) << 34;
        q.n_ctx = 256;
        q.vram_budget = 0;
        QCOMPARE(ember::estimate_fit(*fp, q).kind, ember::FitKind::CpuOnly);
        q.vram_budget = uint64_t(1) << 30;
        const ember::Fit all = ember::estimate_fit(*fp, q);
        QCOMPARE(all.kind, ember::FitKind::AllOnGpu);
        QCOMPARE(all.text, std::string("all on GPU"));

        // The dense parts, the KV cache and scratch, then a share of the FFN rows: hybrid, with
        // about that share of the neurons (whole buckets of 256, so a little less).
        uint64_t dense = fp->kv_bytes_per_token * 256 + ember::compute_margin_bytes(*fp, q) + fp->output_bytes;
        uint64_t ffn = 0;
        for (size_t l = 0; l < size_t(fp->n_layer); ++l) {
            dense += fp->attn_bytes[l] + fp->predictor_bytes[l] + fp->ffn_norm_bytes[l];
            ffn += fp->neuron_bytes[l] * uint64_t(fp->n_ff[l]);
        }
        for (double share : {0.25, 0.5, 0.75}) {
            q.vram_budget = dense + uint64_t(double(ffn) * share);
            const ember::Fit f = ember::estimate_fit(*fp, q);
            QCOMPARE(f.kind, ember::FitKind::Hybrid);
            QVERIFY2(f.neuron_share <= share && f.neuron_share > share - 0.15, f.text.c_str());
            QCOMPARE(f.text, "hybrid: " + std::to_string(int(f.neuron_share * 100)) + " % of neurons on GPU");
        }
        q.vram_budget = dense / 2;  // not even the dense parts: their front on the GPU, every neuron on the CPU
        QCOMPARE(ember::estimate_fit(*fp, q).neuron_share, 0.0);
    }

    // One source of truth: for the same file, budget and context (and the session's own batch),
    // the badge's share of neurons is the share a session on the simulated device puts there —
    // the badge shows what loading the file would give.
    void the_estimate_is_what_a_session_places_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<double>("fraction");  // of the file's size, as the budget
        for (const double f : {0.3, 0.6, 0.9}) {
            QTest::addRow("sparse, %.0f %% of the file", f * 100) << QString::fromStdString(kSparse) << f;
            QTest::addRow("demo model, %.0f %% of the file", f * 100) << QStringLiteral(EMBER_DEMO_MODEL) << f;
        }
    }
    void the_estimate_is_what_a_session_places() {
        QFETCH(QString, path);
        QFETCH(double, fraction);
        auto model = ember::Model::load(path.toStdString());
        QVERIFY2(model.ok(), model.ok() ? "" : model.error().message.c_str());
        const uint64_t size = std::filesystem::file_size(path.toStdString());
        ember::SessionParams sp;
        sp.n_ctx = 2048;
        sp.device = "sim";
        sp.device_budget_bytes = uint64_t(double(size) * fraction);
        sp.gpu_index_path = dir_.path().toStdString() + "/placed.gpuidx";  // not beside the test data
        sp.reset_gpu_index = true;
        auto session = ember::Session::create(std::move(*model), sp);
        QVERIFY2(session.ok(), session.ok() ? "" : session.error().message.c_str());
        const ember::DeviceReport placed = (*session)->device_report();
        int64_t total = 0;
        for (const auto& layer : (*session)->hot_neurons()) total += int64_t(layer.size());
        QCOMPARE(total, placed.hot_neurons);

        auto fp = ember::read_footprint(path.toStdString(), 0);
        QVERIFY(fp.ok());
        ember::FitQuery q;
        q.ram_bytes = uint64_t(1) << 34;
        q.n_ctx = sp.n_ctx;
        q.vram_budget = sp.device_budget_bytes;
        const ember::Fit fit = ember::estimate_fit(*fp, q);
        int64_t neurons = 0;
        for (int64_t n : fp->n_ff) neurons += n;
        QCOMPARE(fit.neuron_share, double(placed.hot_neurons) / double(neurons));
    }

    // A mixture of experts: the experts are neither attention nor dense FFN; once every dense
    // part fits, whole experts fill the rest of the budget.
    void mixture_of_experts_places_whole_experts() {
        const QString path = QString::fromStdString(dir_.path().toStdString() + "/moe.gguf");
        QProcess synth;
        synth.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model",
                    {"-o", path, "--arch", "smallthinker", "--type", "Q4_0", "--n-layer", "2", "--n-embd", "256",
                     "--n-head", "4", "--n-head-kv", "2", "--n-ff", "768", "--n-vocab", "2000", "--experts", "8"});
        QVERIFY(synth.waitForFinished(60000) && synth.exitCode() == 0);
        auto fp = ember::read_footprint(path.toStdString(), 0);
        QVERIFY(fp.ok());
        QCOMPARE(fp->n_expert, 8);
        const uint64_t expert = 3 * 768 * 144;  // gate, up and down: 768 Q4_0 rows of 256 each
        for (size_t l = 0; l < 2; ++l) {
            QCOMPARE(fp->expert_bytes[l], 8 * expert);
            QVERIFY(fp->attn_bytes[l] < expert);
            QCOMPARE(fp->dense_ffn_bytes[l], uint64_t(0));
        }
        ember::FitQuery q;
        q.ram_bytes = uint64_t(1) << 34;
        q.n_ctx = 256;
        q.n_batch = 64;
        q.vram_budget = uint64_t(1) << 30;
        QCOMPARE(ember::estimate_fit(*fp, q).kind, ember::FitKind::AllOnGpu);
        const uint64_t dense = fp->kv_bytes_per_token * 256 + ember::compute_margin_bytes(*fp, q) + fp->output_bytes +
                               fp->attn_bytes[0] + fp->attn_bytes[1] + fp->ffn_norm_bytes[0] + fp->ffn_norm_bytes[1];
        q.vram_budget = dense + 6 * expert;  // 6 of the 16 experts
        const ember::Fit part = ember::estimate_fit(*fp, q);
        QCOMPARE(part.kind, ember::FitKind::Hybrid);
        QCOMPARE(part.neuron_share, 6.0 / 16.0);
        QCOMPARE(part.text, std::string("hybrid: dense parts and 37 % of the experts on GPU"));
        q.vram_budget = dense + expert / 2;
        QCOMPARE(ember::estimate_fit(*fp, q).text, std::string("hybrid: dense parts on GPU, every expert on the CPU"));
    }

    // PowerInfer's transposed layout of gate-first experts goes to a GPU neuron by neuron (an up
    // and a down row each, the gate staying on the CPU): the estimate counts the neurons a
    // session places at the same budget.
    void transposed_experts_place_neurons() {
        const QString path = QString::fromStdString(dir_.path().toStdString() + "/moe-down-t.gguf");
        QProcess synth;
        synth.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model",
                    {"-o", path, "--arch", "smallthinker", "--type", "Q4_0", "--n-layer", "2", "--n-embd", "256",
                     "--n-head", "4", "--n-head-kv", "2", "--n-ff", "768", "--n-vocab", "2000", "--experts", "8",
                     "--down-t"});
        QVERIFY(synth.waitForFinished(60000) && synth.exitCode() == 0);
        auto fp = ember::read_footprint(path.toStdString(), 0);
        QVERIFY(fp.ok());
        QCOMPARE(fp->expert_ff, int64_t(768));
        for (size_t l = 0; l < 2; ++l) QCOMPARE(fp->expert_neuron_bytes[l], uint64_t(2 * 144));  // Q4_0 rows of 256
        ember::FitQuery q;
        q.ram_bytes = uint64_t(1) << 34;
        q.n_ctx = 2048;
        const uint64_t dense = fp->kv_bytes_per_token * 2048 + ember::compute_margin_bytes(*fp, q) + fp->output_bytes +
                               fp->attn_bytes[0] + fp->attn_bytes[1] + fp->ffn_norm_bytes[0] + fp->ffn_norm_bytes[1];
        q.vram_budget = dense + 5000 * 288;
        const ember::Fit fit = ember::estimate_fit(*fp, q);
        QCOMPARE(fit.neuron_share, 5000.0 / (2 * 8 * 768));
        QCOMPARE(fit.text, std::string("hybrid: dense parts and 40 % of the experts' neurons on GPU"));

        auto model = ember::Model::load(path.toStdString());
        QVERIFY(model.ok());
        ember::SessionParams sp;
        sp.n_ctx = 2048;
        sp.device = "sim";
        sp.device_budget_bytes = q.vram_budget;
        auto session = ember::Session::create(std::move(*model), sp);
        QVERIFY2(session.ok(), session.ok() ? "" : session.error().message.c_str());
        QCOMPARE((*session)->device_report().hot_neurons, int64_t(5000));
    }

    void too_large_and_dense() {
        auto fp = ember::read_footprint(kSparse, 0);
        QVERIFY(fp.ok());
        ember::FitQuery q;
        q.ram_bytes = 1 << 20;  // less than the model
        const ember::Fit f = ember::estimate_fit(*fp, q);
        QCOMPARE(f.kind, ember::FitKind::TooLarge);
        QVERIFY(f.ram_needed > fp->weight_bytes);
        QVERIFY2(QString::fromStdString(f.text).startsWith("too large"), f.text.c_str());

        auto dense = ember::read_footprint(kDense, 0);
        QVERIFY(dense.ok());
        QVERIFY(!dense->sparse);
        QCOMPARE(dense->dense_ffn_bytes.size(), size_t(dense->n_layer));
        q.ram_bytes = uint64_t(1) << 34;
        q.vram_budget = uint64_t(1) << 30;
        QCOMPARE(ember::estimate_fit(*dense, q).kind, ember::FitKind::AllOnGpu);
        // A dense model offloads whole layers: a budget for about half of them is hybrid.
        q.n_ctx = 256;
        q.n_batch = 64;
        uint64_t half = ember::compute_margin_bytes(*dense, q);
        for (int32_t l = 0; l < dense->n_layer / 2; ++l)
            half += dense->attn_bytes[size_t(l)] + dense->ffn_norm_bytes[size_t(l)] + dense->dense_ffn_bytes[size_t(l)] +
                    dense->kv_bytes_per_token * 256 / uint64_t(dense->n_layer);
        q.vram_budget = half;
        const ember::Fit hybrid = ember::estimate_fit(*dense, q);
        QCOMPARE(hybrid.kind, ember::FitKind::Hybrid);
        QCOMPARE(QString::fromStdString(hybrid.text),
                 QString("hybrid: %1 of %2 layers on GPU").arg(dense->n_layer / 2).arg(dense->n_layer));
        q.vram_budget = ember::compute_margin_bytes(*dense, q) + 1;
        QCOMPARE(ember::estimate_fit(*dense, q).kind, ember::FitKind::CpuOnly);
    }
};

QTEST_GUILESS_MAIN(TestFitEstimate)
#include "tst_fit_estimate.moc"

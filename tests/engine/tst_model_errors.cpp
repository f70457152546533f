// Bad input to the engine: each case is an error that names the file, tensor or key and the
// bad value, never a crash.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>

#include "ember/model.h"
#include "ember/session.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

using namespace ember;

namespace {

const std::string kFixture = std::string(EMBER_TEST_DATA_DIR) + "/models/tiny-llama-q4_0.gguf";
const std::string kSparseFixture = std::string(EMBER_TEST_DATA_DIR) + "/tiny-relu-llama/model.q4_0.powerinfer.gguf";

// Greedy generation of n tokens that does not stop at end-of-text, so runs compare token for token.
GenerateParams greedy(int32_t n) {
    GenerateParams gp;
    gp.n_predict = n;
    gp.ignore_eos = true;
    gp.sampling.temperature = 0;
    return gp;
}

enum class Edit { None, DropTensor, ReshapeTensor, HalveTensor, RetypeTensor, Architecture, DropKey, BadKeyValue, SetString, Truncate, Garbage };

// Writes a copy of a fixture with one thing changed.
void write_variant(const std::string& out, Edit edit, const std::string& target, const std::string& source = kFixture) {
    if (edit == Edit::Truncate || edit == Edit::Garbage) {
        std::filesystem::copy_file(source, out, std::filesystem::copy_options::overwrite_existing);
        if (edit == Edit::Truncate) std::filesystem::resize_file(out, std::filesystem::file_size(out) / 2);
        else {
            std::ofstream f(out, std::ios::binary | std::ios::trunc);
            f << "this is not a model at all, just text that happens to be long enough";
        }
        return;
    }
    auto src = gguf::File::open(source);
    gguf::Writer w;
    for (const auto& [k, v] : src->metadata()) {
        if (edit == Edit::DropKey && k == target) continue;
        w.set(k, v);
    }
    if (edit == Edit::Architecture) w.set("general.architecture", gguf::Value::string(target));
    if (edit == Edit::BadKeyValue) w.set(target, gguf::Value::u32(0));
    if (edit == Edit::SetString) w.set("tokenizer.chat_template", gguf::Value::string(target));
    for (const auto& t : src->tensors()) {
        std::span<const uint8_t> bytes(t.data, t.nbytes);
        if (t.name == target && edit == Edit::DropTensor) continue;
        if (t.name == target && edit == Edit::ReshapeTensor) {
            // Same bytes, other shape: [a, b] becomes [a * 2, b / 2].
            w.add_tensor(t.name, {t.ne[0] * 2, t.ne[1] / 2}, t.type, bytes);
            continue;
        }
        if (t.name == target && edit == Edit::HalveTensor) {  // a 1-D tensor's first half
            w.add_tensor(t.name, {t.ne[0] / 2}, t.type, bytes.first(bytes.size() / 2));
            continue;
        }
        if (t.name == target && edit == Edit::RetypeTensor) {
            // IQ2_XXS has a known size but no kernel: 66 bytes per 256 values.
            w.add_tensor(t.name, t.ne, 16, std::vector<uint8_t>(size_t(t.nelements() / 256 * 66)));
            continue;
        }
        w.add_tensor(t.name, t.ne, t.type, bytes);
    }
    w.write(out, src->magic());
}

}  // namespace

class TestModelErrors : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

private slots:
    // A small SmallThinker (mixture-of-experts) file to break.
    void initTestCase() {
        QProcess p;
        p.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model",
                {"-o", dir_.path() + "/smallthinker.gguf", "--arch", "smallthinker", "--type", "F16", "--n-layer", "2",
                 "--n-embd", "64", "--n-head", "2", "--n-ff", "32", "--n-vocab", "300", "--experts", "4",
                 "--lm-head-profiler", "32"});
        QVERIFY(p.waitForFinished(60000));
        QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    }

    void load_errors_data() {
        QTest::addColumn<int>("edit");
        QTest::addColumn<QString>("target");
        QTest::addColumn<QStringList>("must_mention");
        QTest::addColumn<QString>("source");
        const QString dense = QString::fromStdString(kFixture), sparse = QString::fromStdString(kSparseFixture);
        QTest::newRow("truncated file") << int(Edit::Truncate) << "" << QStringList{"bad.gguf", "truncated"} << dense;
        QTest::newRow("not a gguf") << int(Edit::Garbage) << "" << QStringList{"bad.gguf", "not a GGUF file"} << dense;
        QTest::newRow("missing tensor") << int(Edit::DropTensor) << "blk.1.ffn_up.weight"
                                        << QStringList{"bad.gguf", "missing tensor 'blk.1.ffn_up.weight'"} << dense;
        QTest::newRow("wrong shape") << int(Edit::ReshapeTensor) << "blk.0.ffn_gate.weight"
                                     << QStringList{"bad.gguf", "blk.0.ffn_gate.weight", "[256, 128]", "expected [128, 256]"} << dense;
        QTest::newRow("unsupported dtype") << int(Edit::RetypeTensor) << "blk.0.ffn_down.weight"
                                           << QStringList{"bad.gguf", "blk.0.ffn_down.weight", "IQ2_XXS"} << dense;
        QTest::newRow("unknown architecture") << int(Edit::Architecture) << "gpt-neox"
                                              << QStringList{"bad.gguf", "general.architecture", "gpt-neox"} << dense;
        QTest::newRow("missing key") << int(Edit::DropKey) << "llama.embedding_length"
                                     << QStringList{"bad.gguf", "llama.embedding_length"} << dense;
        QTest::newRow("zero heads") << int(Edit::BadKeyValue) << "llama.attention.head_count"
                                    << QStringList{"bad.gguf", "llama.attention.head_count", "= 0"} << dense;
        QTest::newRow("missing vocabulary") << int(Edit::DropKey) << "tokenizer.ggml.tokens"
                                            << QStringList{"bad.gguf", "tokenizer.ggml.tokens"} << dense;
        // PowerInfer files.
        QTest::newRow("missing predictor") << int(Edit::DropTensor) << "blk.2.fc1.weight"
                                           << QStringList{"bad.gguf", "missing tensor 'blk.2.fc1.weight'"} << sparse;
        QTest::newRow("predictor of the wrong shape")
            << int(Edit::ReshapeTensor) << "blk.3.fc2.weight"
            << QStringList{"bad.gguf", "blk.3.fc2.weight", "[128, 512]", "expected [64, 1024]"} << sparse;
        QTest::newRow("missing down_t") << int(Edit::DropTensor) << "blk.1.ffn_down_t.weight"
                                        << QStringList{"bad.gguf", "missing tensor 'blk.1.ffn_down_t.weight'"} << sparse;
        // Falcon files.
        const QString falcon = QStringLiteral(EMBER_TEST_DATA_DIR) + "/models/tiny-falcon-f16.powerinfer.gguf";
        QTest::newRow("falcon without fused QKV") << int(Edit::DropTensor) << "blk.1.attn_qkv.weight"
                                                  << QStringList{"bad.gguf", "missing tensor 'blk.1.attn_qkv.weight'"}
                                                  << falcon;
        QTest::newRow("falcon norm without bias") << int(Edit::DropTensor) << "blk.0.attn_norm.bias"
                                                  << QStringList{"bad.gguf", "missing tensor 'blk.0.attn_norm.bias'"}
                                                  << falcon;
        QTest::newRow("falcon without LayerNorm epsilon")
            << int(Edit::DropKey) << "falcon.attention.layer_norm_epsilon"
            << QStringList{"bad.gguf", "falcon.attention.layer_norm_epsilon"} << falcon;
        QTest::newRow("falcon predictor of the wrong shape")
            << int(Edit::ReshapeTensor) << "blk.1.fc2.weight" << QStringList{"bad.gguf", "blk.1.fc2.weight"} << falcon;
        // SmallThinker files.
        const QString moe = dir_.path() + "/smallthinker.gguf";
        QTest::newRow("experts without a count") << int(Edit::DropKey) << "smallthinker.expert_count"
                                                 << QStringList{"bad.gguf", "smallthinker.expert_count"} << moe;
        QTest::newRow("experts without a gating function")
            << int(Edit::BadKeyValue) << "smallthinker.expert_gating_func"
            << QStringList{"bad.gguf", "smallthinker.expert_gating_func", "softmax"} << moe;
        QTest::newRow("missing experts") << int(Edit::DropTensor) << "blk.1.ffn_down_exps.weight"
                                         << QStringList{"bad.gguf", "missing tensor 'blk.1.ffn_down_exps.weight'"} << moe;
        QTest::newRow("router of the wrong shape")
            << int(Edit::ReshapeTensor) << "blk.0.ffn_gate_inp.weight"
            << QStringList{"bad.gguf", "blk.0.ffn_gate_inp.weight", "[128, 2]", "expected [64, 4]"} << moe;
    }

    void load_errors() {
        QFETCH(int, edit);
        QFETCH(QString, target);
        QFETCH(QStringList, must_mention);
        QFETCH(QString, source);
        const std::string path = (dir_.path() + "/bad.gguf").toStdString();
        write_variant(path, Edit(edit), target.toStdString(), source.toStdString());
        auto model = Model::load(path);
        QVERIFY(!model.ok());
        const QString msg = QString::fromStdString(model.error().message);
        for (const QString& m : must_mention) QVERIFY2(msg.contains(m), qPrintable(msg + " lacks " + m));
    }

    // --sparse-lm-head reads lm_head_profiler only when asked, and names it when it is broken.
    void bad_lm_head_profiler_is_named() {
        const std::string path = (dir_.path() + "/bad.gguf").toStdString();
        write_variant(path, Edit::HalveTensor, "lm_head_profiler.weight", (dir_.path() + "/smallthinker.gguf").toStdString());
        QVERIFY(Model::load(path).ok());
        ModelParams mp;
        mp.sparse_lm_head = true;
        auto model = Model::load(path, mp);
        QVERIFY(!model.ok());
        const QString msg = QString::fromStdString(model.error().message);
        for (const char* m : {"bad.gguf", "lm_head_profiler.weight", "[5824]", "r·(64 + 300)", "multiple of 32"})
            QVERIFY2(msg.contains(QString::fromUtf8(m)), qPrintable(msg + " lacks " + QString::fromUtf8(m)));
    }

    void unmodified_copy_loads() {
        // The variant writer itself produces loadable files, so the errors above are the edits'.
        const std::string path = (dir_.path() + "/good.gguf").toStdString();
        write_variant(path, Edit::None, "");
        QVERIFY(Model::load(path).ok());
    }

    // The chat template is read for the app's prompt format; one of the wrong type is ignored.
    void chat_template_is_read_when_it_is_a_string() {
        const std::string with = (dir_.path() + "/template.gguf").toStdString();
        write_variant(with, Edit::SetString, "{{ '<|im_start|>' }}");
        auto m = Model::load(with);
        QVERIFY(m.ok());
        QCOMPARE((*m)->info().chat_template, std::string("{{ '<|im_start|>' }}"));
        const std::string wrong = (dir_.path() + "/template-u32.gguf").toStdString();
        write_variant(wrong, Edit::BadKeyValue, "tokenizer.chat_template");
        auto w = Model::load(wrong);
        QVERIFY2(w.ok(), w.ok() ? "" : w.error().message.c_str());
        QVERIFY((*w)->info().chat_template.empty());
    }

    void load_reports_progress_and_can_be_cancelled() {
        std::vector<float> seen;
        auto model = Model::load(kSparseFixture, {}, [&](float f) {
            seen.push_back(f);
            return true;
        });
        QVERIFY(model.ok());
        QVERIFY(seen.size() >= 2);
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        QCOMPARE(seen.back(), 1.0f);

        int calls = 0;
        auto cancelled = Model::load(kSparseFixture, {}, [&](float) { return ++calls < 1; });
        QVERIFY(!cancelled.ok());
        QVERIFY2(QString::fromStdString(cancelled.error().message).contains("loading cancelled"),
                 cancelled.error().message.c_str());
        QCOMPARE(calls, 1);
    }

    void cancel_from_another_thread() {
        auto model = Model::load(kFixture);
        QVERIFY(model.ok());
        SessionParams sp;
        sp.n_ctx = 4096;
        auto s = Session::create(*model, sp);
        QVERIFY(s.ok());
        GenerateParams gp;
        gp.n_predict = -1;  // until the context is full: cancel must end it long before
        gp.ignore_eos = true;
        std::atomic<int> tokens{0};
        std::thread canceller([&] {
            while (tokens.load() < 5) std::this_thread::yield();
            (*s)->cancel();
        });
        const int32_t prompt[] = {1, 907};
        auto r = (*s)->generate(prompt, gp, [&](const TokenEvent&) {
            ++tokens;
            return true;
        });
        canceller.join();
        QVERIFY(r.ok());
        QCOMPARE(r->stop_reason, StopReason::Cancelled);
        QVERIFY(r->tokens.size() < 4000);
    }

    // A long prompt is cancelled between batches, well before its end, and the session stays
    // usable: cleared, it answers exactly as a fresh one.
    void cancel_during_prompt_evaluation() {
        auto model = Model::load(kFixture);
        QVERIFY(model.ok());
        SessionParams sp;
        sp.n_ctx = 4096;
        sp.n_batch = 1;  // one forward pass per token: thousands of cancellation points
        auto s = Session::create(*model, sp);
        QVERIFY(s.ok());
        const std::vector<int32_t> prompt(4000, 907);
        GenerateParams gp = greedy(4);
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
            (*s)->cancel();
        });
        auto cancelled = (*s)->generate(prompt, gp);
        canceller.join();
        QVERIFY(cancelled.ok());
        QCOMPARE(cancelled->stop_reason, StopReason::Cancelled);
        QVERIFY(cancelled->tokens.empty());
        QVERIFY2((*s)->n_past() < 4000, "the cancel landed after the whole prompt was evaluated");

        const int32_t short_prompt[] = {1, 907, 261};
        (*s)->clear();
        auto again = (*s)->generate(short_prompt, gp);
        auto fresh_session = Session::create(*model, sp);
        QVERIFY(again.ok() && fresh_session.ok());
        auto fresh = (*fresh_session)->generate(short_prompt, gp);
        QVERIFY(fresh.ok());
        QCOMPARE(again->tokens, fresh->tokens);
    }

    // Models are read into memory at load (the default; --mmap maps instead), so a file that is
    // truncated or rewritten while the model is in use changes nothing and cannot fault.
    void file_truncated_after_load_is_harmless() {
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("model.gguf")).toStdString();
        std::filesystem::copy_file(kFixture, path);
        auto model = Model::load(path);
        QVERIFY(model.ok());
        GenerateParams gp = greedy(6);
        const int32_t prompt[] = {1, 907, 261, 2020};
        auto before = Session::create(*model);
        QVERIFY(before.ok());
        auto first = (*before)->generate(prompt, gp);
        QVERIFY(first.ok());

        std::filesystem::resize_file(path, 100);
        auto after = Session::create(*model);
        QVERIFY(after.ok());
        auto second = (*after)->generate(prompt, gp);
        QVERIFY(second.ok());
        QCOMPARE(second->tokens, first->tokens);
        // Loading the truncated file now is a clear error naming it.
        auto reload = Model::load(path);
        QVERIFY(!reload.ok());
        QVERIFY2(reload.error().message.find(path) != std::string::npos, reload.error().message.c_str());
    }

    void session_errors() {
        auto model = Model::load(kFixture);
        QVERIFY(model.ok());
        SessionParams sp;
        sp.n_ctx = 8;
        auto s = Session::create(*model, sp);
        QVERIFY(s.ok());

        // An empty prompt with nothing in the context.
        auto empty = (*s)->generate({}, GenerateParams{});
        QVERIFY(!empty.ok());
        QVERIFY(QString::fromStdString(empty.error().message).contains("empty prompt"));

        // A prompt longer than the context.
        std::vector<int32_t> tokens(9, 300);
        auto over = (*s)->evaluate(tokens);
        QVERIFY(!over.ok());
        QVERIFY2(QString::fromStdString(over.error().message).contains("context overflow"), over.error().message.c_str());
        QVERIFY(over.error().code == ErrorCode::ContextOverflow);
        QCOMPARE((*s)->n_past(), 0);

        // A token id outside the vocabulary.
        const int32_t bad[] = {1, 999999};
        auto oov = (*s)->evaluate(bad);
        QVERIFY(!oov.ok());
        QVERIFY(QString::fromStdString(oov.error().message).contains("999999"));
        QVERIFY(oov.error().code == ErrorCode::Failed);

        // Generation stops cleanly when the context fills up.
        (*s)->clear();
        GenerateParams gp = greedy(100);
        const int32_t prompt[] = {1, 907, 261};
        auto full = (*s)->generate(prompt, gp);
        QVERIFY(full.ok());
        QCOMPARE(full->stop_reason, StopReason::ContextFull);
        QCOMPARE((*s)->n_past(), 8);

        // Bad session parameters.
        SessionParams bad_params;
        bad_params.n_batch = 0;
        auto nb = Session::create(*model, bad_params);
        QVERIFY(!nb.ok());
        QVERIFY(QString::fromStdString(nb.error().message).contains("batch size 0"));
    }

    // A prompt whose start is already in the context (a chat grown by one turn, the API server's
    // next request) samples as the whole prompt does: the repeat penalty sees the cached tokens.
    void cached_prefix_samples_as_the_whole_prompt() {
        auto model = Model::load(kFixture);
        QVERIFY(model.ok());
        GenerateParams gp = greedy(24);
        gp.sampling.repeat_penalty = 1.5f;
        gp.sampling.repeat_last_n = 64;
        const std::vector<int32_t> prompt = {1, 907, 261, 2020, 907, 261, 2020, 907, 261, 2020, 907, 261};
        auto whole_session = Session::create(*model);
        auto cached_session = Session::create(*model);
        QVERIFY(whole_session.ok() && cached_session.ok());
        auto whole = (*whole_session)->generate(prompt, gp);
        QVERIFY(whole.ok());
        const std::span<const int32_t> all(prompt);
        QVERIFY((*cached_session)->evaluate(all.first(prompt.size() - 1)).ok());
        auto cached = (*cached_session)->generate(all.last(1), gp);
        QVERIFY(cached.ok());
        QCOMPARE(cached->tokens, whole->tokens);
        // And after a truncation, the dropped tokens no longer count.
        (*cached_session)->truncate(int32_t(prompt.size()) - 1);
        auto again = (*cached_session)->generate(all.last(1), gp);
        QVERIFY(again.ok());
        QCOMPARE(again->tokens, whole->tokens);
    }

    void truncate_and_cancel() {
        auto model = Model::load(kFixture);
        QVERIFY(model.ok());
        auto s = Session::create(*model);
        QVERIFY(s.ok());
        GenerateParams gp = greedy(6);
        const int32_t prompt[] = {1, 907, 261, 2020};
        auto first = (*s)->generate(prompt, gp);
        QVERIFY(first.ok());
        QCOMPARE((*s)->n_past(), 10);
        // Regenerate: drop the answer and sample again from the same point; greedy repeats itself.
        (*s)->truncate(4);
        QCOMPARE((*s)->n_past(), 4);
        const int32_t last_prompt_token[] = {2020};
        (*s)->truncate(3);
        auto second = (*s)->generate(last_prompt_token, gp);
        QVERIFY(second.ok());
        QCOMPARE(second->tokens, first->tokens);

        // Cancel from the callback's thread: the run stops at the next token boundary.
        (*s)->clear();
        gp.n_predict = 50;
        int seen = 0;
        auto cancelled = (*s)->generate(prompt, gp, [&](const TokenEvent&) {
            if (++seen == 3) (*s)->cancel();
            return true;
        });
        QVERIFY(cancelled.ok());
        QCOMPARE(cancelled->stop_reason, StopReason::Cancelled);
        QCOMPARE(int(cancelled->tokens.size()), 3);
    }
};

QTEST_GUILESS_MAIN(TestModelErrors)
#include "tst_model_errors.moc"

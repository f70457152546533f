// The bundled demo model (resources/models/ember-demo/, made by engine/convert/make_demo_model.sh):
// it loads as a PowerInfer sparse model with its activation statistics, and writes the English
// its README shows, the same on one thread, two threads and the sim device.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <string>

#include "engine_test_helpers.h"
#include "ember/model.h"
#include "ember/session.h"
#include "sparse/activation_file.h"

namespace {

const std::string kDir = EMBER_DEMO_MODEL_DIR;
const QString kModel = QString::fromStdString(kDir + "/ember-demo.powerinfer.gguf");

// The first greedy words after "In the beginning" (README.md of the model). Only a prefix is
// pinned, so that kernel changes which move late logits by rounding do not fail this test.
const std::string kExpectedPrefix = " of the LORD is the LORD, and the LORD thy God.";

std::string generate(const std::shared_ptr<ember::Model>& model, ember::SessionParams sp) {
    sp.n_ctx = 256;
    auto s = ember::Session::create(model, sp);
    if (!s) qFatal("%s", s.error().message.c_str());
    const auto prompt = model->tokenize("In the beginning", true);
    auto r = (*s)->generate(prompt, test_helpers::greedy(24));
    if (!r) qFatal("%s", r.error().message.c_str());
    std::string text;
    for (int32_t t : r->tokens) text += model->token_text(t);
    return text;
}

}  // namespace

class TestDemoModel : public QObject {
    Q_OBJECT

private slots:
    void loads_as_sparse_model() {
        auto m = test_helpers::load_model(kModel);
        const ember::ModelInfo& info = m->info();
        QCOMPARE(info.architecture, std::string("llama"));
        QVERIFY(info.powerinfer_file);
        QVERIFY(info.sparse);
        QCOMPARE(info.n_layer, 6);
        QCOMPARE(info.n_vocab, 4096);
        QCOMPARE(info.ffn_activation, std::string("relu"));
        const auto stats = ember::sparse::read_activation_dir(kDir + "/activation", info.n_layer, info.n_ff);
        QCOMPARE(int(stats.size()), info.n_layer);
    }

    void writes_the_readme_text() {
        auto m = test_helpers::load_model(kModel);
        ember::SessionParams one, two, sim;
        one.n_threads = 1;
        two.n_threads = 2;
        sim.n_threads = 1;
        sim.device = "sim";
        sim.device_budget_bytes = 4u << 20;  // room for the dense parts and some hot neurons
        const std::string text = generate(m, one);
        qInfo("In the beginning%s", text.c_str());
        QCOMPARE(text.substr(0, kExpectedPrefix.size()), kExpectedPrefix);
        QCOMPARE(generate(m, two), text);
        // The sim device writes <model>.generated.gpuidx beside the model: keep it out of the source tree.
        QTemporaryDir dir;
        QVERIFY(dir.isValid() && QDir(dir.path()).mkdir("activation"));
        const QString copy = dir.filePath("ember-demo.powerinfer.gguf");
        QVERIFY(QFile::copy(kModel, copy));
        for (int il = 0; il < m->info().n_layer; ++il) {
            const QString name = QString("/activation/activation_%1.pt").arg(il);
            QVERIFY(QFile::copy(QString::fromStdString(kDir) + name, dir.path() + name));
        }
        QCOMPARE(generate(test_helpers::load_model(copy), sim), text);
    }
};

QTEST_GUILESS_MAIN(TestDemoModel)
#include "tst_demo_model.moc"

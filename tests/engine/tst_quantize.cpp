// ember-quantize against independent quantizers: the fixture script's Python Q4_0/Q8_0
// (tests/data/models) and PowerInfer's own `quantize` output for the tiny ReLU LLaMA.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

using namespace ember;

namespace {

const QString kData = QStringLiteral(EMBER_TEST_DATA_DIR);

int run_quantize(const QString& in, const QString& out, const QString& type, QString* err = nullptr) {
    QProcess p;
    p.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-quantize", {in, out, type});
    if (!p.waitForFinished(120000)) return -1;
    if (err) *err = QString::fromUtf8(p.readAllStandardError());
    return p.exitCode();
}

}  // namespace

class TestQuantize : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;

private slots:
    void matches_reference_quantizer_data() {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("reference");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("skip");  // tensor the reference quantized to another type
        QTest::newRow("python q4_0") << "models/tiny-llama-f32.gguf" << "models/tiny-llama-q4_0.gguf" << "Q4_0" << "";
        QTest::newRow("python q8_0") << "models/tiny-llama-f32.gguf" << "models/tiny-llama-q8_0.gguf" << "Q8_0" << "";
        // PowerInfer's quantize made output.weight Q6_K; Ember writes Q4_0 everywhere.
        QTest::newRow("powerinfer q4_0") << "tiny-relu-llama/model.dense.gguf" << "tiny-relu-llama/model.dense.q4_0.gguf"
                                         << "Q4_0" << "output.weight";
    }

    void matches_reference_quantizer() {
        QFETCH(QString, source);
        QFETCH(QString, reference);
        QFETCH(QString, type);
        QFETCH(QString, skip);
        const QString out = dir_.path() + "/out.gguf";
        QCOMPARE(run_quantize(kData + "/" + source, out, type), 0);
        auto ours = gguf::File::open(out.toStdString());
        auto ref = gguf::File::open((kData + "/" + reference).toStdString());
        QCOMPARE(ours->magic(), std::string("GGUF"));
        QCOMPARE(*ours->get_uint("general.file_type"), *ref->get_uint("general.file_type"));
        QCOMPARE(ours->tensors().size(), ref->tensors().size());
        int compared = 0;
        for (const auto& r : ref->tensors()) {
            const gguf::TensorInfo* t = ours->find_tensor(r.name);
            QVERIFY2(t, r.name.c_str());
            if (r.name == skip.toStdString()) continue;
            QVERIFY2(t->type == r.type, r.name.c_str());
            QCOMPARE(t->ne, r.ne);
            QVERIFY2(t->nbytes == r.nbytes && std::memcmp(t->data, r.data, r.nbytes) == 0,
                     qPrintable(QString("tensor %1 differs").arg(QString::fromStdString(r.name))));
            ++compared;
        }
        QVERIFY(compared >= int(ref->tensors().size()) - 1);
    }

    void keeps_powerinfer_magic() {
        // A PWRI copy of the F16 fixture stays PWRI.
        auto src = gguf::File::open((kData + "/models/tiny-llama-f16.gguf").toStdString());
        gguf::Writer w;
        for (const auto& [k, v] : src->metadata()) w.set(k, v);
        for (const auto& t : src->tensors()) w.add_tensor(t.name, t.ne, t.type, std::span<const uint8_t>(t.data, t.nbytes));
        const QString pwri = dir_.path() + "/sparse.powerinfer.gguf";
        w.write(pwri.toStdString(), "PWRI");
        const QString out = dir_.path() + "/sparse.q4_0.powerinfer.gguf";
        QCOMPARE(run_quantize(pwri, out, "Q4_0"), 0);
        auto q = gguf::File::open(out.toStdString());
        QCOMPARE(q->magic(), std::string("PWRI"));
        QCOMPARE(q->find_tensor("blk.0.ffn_down.weight")->type, 2u);
        QCOMPARE(q->find_tensor("blk.0.ffn_norm.weight")->type, 0u);
        QCOMPARE(*q->get_string("tokenizer.ggml.model"), std::string("llama"));
    }

    void bad_arguments_fail_cleanly_data() {
        QTest::addColumn<QString>("in");
        QTest::addColumn<QString>("type");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown type") << "models/tiny-llama-f16.gguf" << "Q5_K" << "not supported";
        QTest::newRow("missing input") << "models/nope.gguf" << "Q4_0" << "nope.gguf";
        QTest::newRow("not a gguf") << "models/README.md" << "Q4_0" << "not a GGUF file";
    }

    void bad_arguments_fail_cleanly() {
        QFETCH(QString, in);
        QFETCH(QString, type);
        QFETCH(QString, message);
        QString err;
        const int rc = run_quantize(kData + "/" + in, dir_.path() + "/bad.gguf", type, &err);
        QVERIFY(rc == 1 || rc == 2);
        QVERIFY2(err.contains(message), qPrintable(err));
        QVERIFY(!QFile::exists(dir_.path() + "/bad.gguf"));
    }
};

QTEST_GUILESS_MAIN(TestQuantize)
#include "tst_quantize.moc"

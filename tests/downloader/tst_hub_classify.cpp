// What a repo's files are to the app, on the layouts of PowerInfer's published repos.
#include <QtTest>

#include "ember/hub/classify.h"

using namespace ember::hub;

namespace {

FileEntry lfs(const std::string& path, uint64_t size) {
    return {path, size, std::string(40, 'a'), std::string(64, 'b')};
}
FileEntry small(const std::string& path, uint64_t size) { return {path, size, std::string(40, 'c'), ""}; }

std::vector<FileEntry> with_activation(std::vector<FileEntry> files, int n_layer) {
    for (int il = 0; il < n_layer; ++il) files.push_back(lfs("activation/activation_" + std::to_string(il) + ".pt", 1000));
    return files;
}

}  // namespace

class TestHubClassify : public QObject {
    Q_OBJECT

private slots:
    void quantization_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("quant");
        QTest::newRow("powerinfer f16") << "llama-7b-relu.powerinfer.gguf" << "";
        QTest::newRow("powerinfer q4") << "llama-70b-relu.q4.powerinfer.gguf" << "Q4";
        QTest::newRow("bamboo q4_0") << "bamboo-7b-v0.1.Q4_0.powerinfer.gguf" << "Q4_0";
        QTest::newRow("k quant") << "dir/Mistral-7B-Instruct-Q4_K_M.gguf" << "Q4_K_M";
        QTest::newRow("iq") << "model.IQ3_XXS.gguf" << "IQ3_XXS";
        QTest::newRow("f16") << "model-f16.gguf" << "F16";
        QTest::newRow("bf16") << "model_bf16.gguf" << "BF16";
        QTest::newRow("version is not a quant") << "bamboo-7b-v0.1.gguf" << "";
        QTest::newRow("q inside word") << "qwen2-7b.gguf" << "";
    }

    void quantization() {
        QFETCH(QString, name);
        QFETCH(QString, quant);
        QCOMPARE(QString::fromStdString(quantization_from_name(name.toStdString())), quant);
    }

    void relu_llama() {
        auto files = with_activation({lfs("llama-7b-relu.powerinfer.gguf", 15100000000), small("config.json", 30),
                                      small(".gitignore", 9), small("README.md", 442), small(".gitattributes", 1500)},
                                     32);
        RepoLayout l = classify(files);
        QCOMPARE(l.sparse_models.size(), size_t(1));
        QCOMPARE(l.dense_models.size(), size_t(0));
        QCOMPARE(l.activation.size(), size_t(32));
        QCOMPARE(l.config.size(), size_t(2));  // config.json, README.md
        QCOMPARE(l.other.size(), size_t(2));   // the dot files
        QVERIFY(kind_of(l, "activation/activation_31.pt") == FileKind::Activation);
        QVERIFY(kind_of(l, ".gitattributes") == FileKind::Other);

        auto plan = plan_model_download(l, "llama-7b-relu.powerinfer.gguf");
        QVERIFY(plan.ok());
        QCOMPARE(plan->files.size(), size_t(1 + 32 + 2));
        QCOMPARE(QString::fromStdString(plan->files.front().path), QString("llama-7b-relu.powerinfer.gguf"));
        QCOMPARE(plan->total_bytes, uint64_t(15100000000 + 32 * 1000 + 30 + 442));
    }

    void prosparse_has_no_powerinfer_names() {
        auto files = with_activation({lfs("prosparse-llama-2-7b.gguf", 14500000000),
                                      lfs("prosparse-llama-2-7b-clip15.gguf", 14500000000), small("config.json", 972)},
                                     32);
        RepoLayout l = classify(files);
        QCOMPARE(l.sparse_models.size(), size_t(2));
        QCOMPARE(l.dense_models.size(), size_t(0));
    }

    void bamboo_mixes_sparse_and_dense() {
        auto files = with_activation({lfs("bamboo-7b-v0.1.powerinfer.gguf", 16000000000),
                                      lfs("bamboo-7b-v0.1.Q4_0.powerinfer.gguf", 4680000000),
                                      lfs("bamboo-7b-v0.1.gguf", 14500000000), lfs("bamboo-7b-v0.1.Q4_0.gguf", 4260000000),
                                      small("config.json", 31)},
                                     32);
        RepoLayout l = classify(files);
        QCOMPARE(l.sparse_models.size(), size_t(2));
        QCOMPARE(l.dense_models.size(), size_t(2));
        QCOMPARE(QString::fromStdString(l.sparse_models[1].quantization), QString("Q4_0"));
        auto dense = plan_model_download(l, "bamboo-7b-v0.1.Q4_0.gguf");
        QVERIFY(dense.ok());
        QCOMPARE(dense->files.size(), size_t(2));  // a dense model needs no activation/
        QCOMPARE(dense->total_bytes, uint64_t(4260000000 + 31));
    }

    void plain_gguf_repo_is_dense() {
        RepoLayout l = classify({lfs("m.Q8_0.gguf", 100), small("README.md", 10)});
        QCOMPARE(l.dense_models.size(), size_t(1));
        QCOMPARE(QString::fromStdString(l.dense_models[0].quantization), QString("Q8_0"));
    }

    void unknown_model_is_an_error() {
        RepoLayout l = classify({lfs("m.gguf", 100), small("README.md", 10)});
        auto plan = plan_model_download(l, "README.md");
        QVERIFY(!plan.ok());
        QVERIFY(plan.error().message.find("README.md") != std::string::npos);
    }
};

QTEST_MAIN(TestHubClassify)
#include "tst_hub_classify.moc"

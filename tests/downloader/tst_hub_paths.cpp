// Path safety and URL handling: every path from the Hub stays inside the model folder, and
// pagination links never lead the token away from the endpoint.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "path_safety.h"
#include "url.h"

using namespace ember::hub;
namespace fs = std::filesystem;

class TestHubPaths : public QObject {
    Q_OBJECT

private slots:
    void hub_path_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("ok");
        QTest::newRow("plain") << "model.gguf" << true;
        QTest::newRow("nested") << "activation/activation_0.pt" << true;
        QTest::newRow("dots in name") << "bamboo-7b-v0.1.Q4_0.powerinfer.gguf" << true;
        QTest::newRow("dot file") << ".gitattributes" << true;
        QTest::newRow("empty") << "" << false;
        QTest::newRow("absolute") << "/etc/passwd" << false;
        QTest::newRow("parent") << "../evil" << false;
        QTest::newRow("parent inside") << "activation/../../evil" << false;
        QTest::newRow("parent last") << "activation/.." << false;
        QTest::newRow("dot segment") << "./model.gguf" << false;
        QTest::newRow("double slash") << "activation//x.pt" << false;
        QTest::newRow("trailing slash") << "activation/" << false;
        QTest::newRow("backslash") << "..\\evil" << false;
        QTest::newRow("drive") << "C:/evil" << false;
        QTest::newRow("control") << "a\nb" << false;
        QTest::newRow("NUL") << QString::fromUtf8("model.gguf\0.txt", 15) << false;
    }

    void hub_path() {
        QFETCH(QString, path);
        QFETCH(bool, ok);
        Status s = check_hub_path(path.toStdString());
        QCOMPARE(s.ok(), ok);
        if (!ok) QVERIFY2(s.error().message.find("refusing Hub path") == 0, s.error().message.c_str());
    }

    void destination_keeps_hub_layout() {
        auto d = destination("/m", "PowerInfer/X", "activation/activation_3.pt");
        QVERIFY(d.ok());
        QCOMPARE(QString::fromStdString(d->string()), QString("/m/PowerInfer/X/activation/activation_3.pt"));
        QVERIFY(!destination("/m", "PowerInfer/X", "../../x").ok());
    }

    void symlinked_folder_is_refused() {
        QTemporaryDir tmp;
        fs::path repo = fs::path(tmp.path().toStdString()) / "o" / "r";
        fs::create_directories(repo);
        fs::create_directories(fs::path(tmp.path().toStdString()) / "elsewhere");
        fs::create_directory_symlink(fs::path(tmp.path().toStdString()) / "elsewhere", repo / "activation");
        Status s = check_inside(repo, repo / "activation" / "activation_0.pt");
        QVERIFY(!s.ok());
        QVERIFY2(s.error().message.find("outside") != std::string::npos, s.error().message.c_str());
        fs::create_directories(repo / "real");
        QVERIFY(check_inside(repo, repo / "real" / "f").ok());
    }

    void encode() {
        QCOMPARE(QString::fromStdString(url::encode("a b/c+d", true)), QString("a%20b/c%2Bd"));
        QCOMPARE(QString::fromStdString(url::encode("refs/pr/1", false)), QString("refs%2Fpr%2F1"));
    }

    void loopback() {
        QVERIFY(url::is_loopback("http://127.0.0.1:8080/x"));
        QVERIFY(url::is_loopback("http://localhost:1"));
        QVERIFY(url::is_loopback("http://[::1]:1/"));
        QVERIFY(!url::is_loopback("http://127.example.com/"));
        QVERIFY(!url::is_loopback("https://huggingface.co"));
    }

    void next_link() {
        const std::string base = "https://huggingface.co/api/models/a/b/tree/main?recursive=true";
        auto n = url::next_link(R"(<https://huggingface.co/api/models/a/b/tree/main?recursive=true&cursor=XYZ>; rel="next")", base);
        QVERIFY(n.has_value());
        QCOMPARE(QString::fromStdString(*n), QString("https://huggingface.co/api/models/a/b/tree/main?recursive=true&cursor=XYZ"));
        auto rel = url::next_link(R"(</api/x?cursor=2>; rel="prev", </api/x?cursor=4>; rel="next")", base);
        QVERIFY(rel.has_value());
        QCOMPARE(QString::fromStdString(*rel), QString("https://huggingface.co/api/x?cursor=4"));
        QVERIFY(!url::next_link(R"(<https://huggingface.co/x>; rel="prev")", base).has_value());
        QVERIFY(!url::next_link("garbage", base).has_value());
        QCOMPARE(url::origin("https://huggingface.co/x"), std::optional<std::string>("https://huggingface.co:443"));
        QVERIFY(url::origin("https://evil.example/x") != url::origin(base));
    }
};

QTEST_MAIN(TestHubPaths)
#include "tst_hub_paths.moc"

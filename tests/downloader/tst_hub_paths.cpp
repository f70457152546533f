// Path safety and URL handling: every path from the Hub stays inside the model folder, and
// pagination links never lead the token away from the endpoint.
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

#include "ember/hub/glob.h"
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

    // `--include` as huggingface-cli's (Python's fnmatch.fnmatchcase).
    void include_pattern_data() {
        QTest::addColumn<QString>("pattern");
        QTest::addColumn<QString>("path");
        QTest::addColumn<bool>("match");
        QTest::newRow("exact") << "config.json" << "config.json" << true;
        QTest::newRow("exact, other") << "config.json" << "config.jsonx" << false;
        QTest::newRow("star crosses folders") << "*.pt" << "activation/activation_0.pt" << true;
        QTest::newRow("folder star") << "activation/*" << "activation/activation_12.pt" << true;
        QTest::newRow("folder star, other folder") << "activation/*" << "act/activation_12.pt" << false;
        QTest::newRow("star in the middle") << "*q4*.gguf" << "llama-7b.q4.powerinfer.gguf" << true;
        QTest::newRow("star backtracks") << "*a*b" << "aaab-ab-b" << true;
        QTest::newRow("star backtracks, no") << "*a*b" << "aaab-ab-c" << false;
        QTest::newRow("only stars") << "**" << "" << true;
        QTest::newRow("question") << "activation_?.pt" << "activation_7.pt" << true;
        QTest::newRow("question needs one") << "activation_?.pt" << "activation_.pt" << false;
        QTest::newRow("set") << "model.[qf]*.gguf" << "model.q4_0.gguf" << true;
        QTest::newRow("set, no") << "model.[qf]*.gguf" << "model.Q4_0.gguf" << false;
        QTest::newRow("range") << "activation_[0-3].pt" << "activation_2.pt" << true;
        QTest::newRow("range, no") << "activation_[0-3].pt" << "activation_4.pt" << false;
        QTest::newRow("negated set") << "[!.]*" << ".gitattributes" << false;
        QTest::newRow("negated set, yes") << "[!.]*" << "README.md" << true;
        QTest::newRow("bracket first in set") << "[]]x" << "]x" << true;
        QTest::newRow("dash last in set") << "[a-]x" << "-x" << true;
        QTest::newRow("unclosed bracket is literal") << "[ab" << "[ab" << true;
        QTest::newRow("case matters") << "*.GGUF" << "m.gguf" << false;
        QTest::newRow("no escapes") << "a\\*" << "a\\b" << true;
    }

    void include_pattern() {
        QFETCH(QString, pattern);
        QFETCH(QString, path);
        QFETCH(bool, match);
        QCOMPARE(glob_match(pattern.toStdString(), path.toStdString()), match);
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
        QVERIFY(url::is_loopback("http://127.1.2.3:9/"));
        QVERIFY(!url::is_loopback("http://127.0.0.1.example.com/"));
        QVERIFY(!url::is_loopback("http://128.0.0.1/"));
        QVERIFY(!url::is_loopback("http://10.127.0.1/"));
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

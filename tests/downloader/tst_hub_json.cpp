// The Hub's JSON answers: good ones parse into values, bad ones fail naming the URL and field.
#include <QtTest>

#include "hub_json.h"

using namespace ember::hub;

namespace {
const std::string url = "https://hub.test/api/models/o/r";
const char* sha = "0123456789abcdef0123456789abcdef01234567";
const char* sha256 = "06926c2d2da1777baa9ee92fa4d1e08ede095416d534e1877c1df22210f8e5a5";
}  // namespace

class TestHubJson : public QObject {
    Q_OBJECT

private slots:
    void search() {
        auto r = json::parse_search(
            R"([{"id":"PowerInfer/A","downloads":12,"likes":3,"tags":["gguf",1],"gated":false},
                {"id":"o/B","gated":"manual","lastModified":"2024-01-01T00:00:00.000Z"}])",
            url);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->size(), size_t(2));
        QCOMPARE((*r)[0].downloads, int64_t(12));
        QCOMPARE((*r)[0].tags.size(), size_t(1));
        QVERIFY((*r)[1].gated == Gated::Manual);
        QCOMPARE(QString::fromStdString((*r)[1].last_modified), QString("2024-01-01T00:00:00.000Z"));
    }

    void info() {
        std::string body = QString(R"({"id":"o/r","sha":"%1","gated":"auto","private":false,
            "siblings":[{"rfilename":"a.gguf"},{"rfilename":"activation/activation_0.pt"}]})").arg(sha).toStdString();
        auto r = json::parse_info(body, url);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(QString::fromStdString(r->sha), QString(sha));
        QVERIFY(r->gated == Gated::Auto);
        QCOMPARE(r->siblings.size(), size_t(2));
    }

    void tree() {
        std::string body = QString(R"([{"type":"directory","oid":"%1","size":0,"path":"activation"},
            {"type":"file","oid":"%1","size":30,"path":"config.json"},
            {"type":"file","oid":"%1","size":5000000000,"path":"m.gguf",
             "lfs":{"oid":"%2","size":5000000000,"pointerSize":134}}])").arg(sha, sha256).toStdString();
        auto r = json::parse_tree_page(body, url);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().message.c_str());
        QCOMPARE(r->size(), size_t(2));
        QVERIFY(!(*r)[0].is_lfs());
        QCOMPARE((*r)[1].size, uint64_t(5000000000));
        QCOMPARE(QString::fromStdString((*r)[1].lfs_sha256), QString(sha256));
    }

    void bad_answers_data() {
        QTest::addColumn<int>("which");  // 0 search, 1 info, 2 tree
        QTest::addColumn<QString>("body");
        QTest::addColumn<QString>("names");
        QTest::newRow("not json") << 2 << "<html>" << "not valid JSON";
        QTest::newRow("object for tree") << 2 << "{}" << "not an array";
        QTest::newRow("array for info") << 1 << "[]" << "not an object";
        QTest::newRow("no id") << 0 << R"([{"downloads":1}])" << "'[0].id' is missing";
        QTest::newRow("id number") << 0 << R"([{"id":5}])" << "'[0].id' is number";
        QTest::newRow("bad sha") << 1 << R"({"id":"o/r","sha":"xyz"})" << "'sha' is 'xyz'";
        QTest::newRow("bad gated") << 1 << QString(R"({"id":"o/r","sha":"%1","gated":7})").arg(sha) << "'gated'";
        QTest::newRow("sibling") << 1 << QString(R"({"id":"o/r","sha":"%1","siblings":[{"x":1}]})").arg(sha)
                                 << "'siblings[0].rfilename' is missing";
        QTest::newRow("negative size") << 2 << QString(R"([{"type":"file","oid":"%1","size":-1,"path":"a"}])").arg(sha)
                                       << "'[0].size' is -1";
        QTest::newRow("bad lfs oid") << 2
                                     << QString(R"([{"type":"file","oid":"%1","size":1,"path":"a","lfs":{"oid":"ab","size":1}}])").arg(sha)
                                     << "'[0].lfs.oid'";
        QTest::newRow("lfs size") << 2
                                  << QString(R"([{"type":"file","oid":"%1","size":1,"path":"a","lfs":{"oid":"%2","size":2}}])").arg(sha, sha256)
                                  << "lfs.size 2";
        QTest::newRow("odd type") << 2 << QString(R"([{"type":"link","oid":"%1","size":1,"path":"a"}])").arg(sha) << "'link'";
    }

    void bad_answers() {
        QFETCH(int, which);
        QFETCH(QString, body);
        QFETCH(QString, names);
        std::string b = body.toStdString();
        std::string message;
        if (which == 0) {
            auto r = json::parse_search(b, url);
            QVERIFY(!r.ok());
            message = r.error().message;
        } else if (which == 1) {
            auto r = json::parse_info(b, url);
            QVERIFY(!r.ok());
            message = r.error().message;
        } else {
            auto r = json::parse_tree_page(b, url);
            QVERIFY(!r.ok());
            message = r.error().message;
        }
        QVERIFY2(message.find(url) == 0, message.c_str());
        QVERIFY2(message.find(names.toStdString()) != std::string::npos, message.c_str());
    }
};

QTEST_MAIN(TestHubJson)
#include "tst_hub_json.moc"

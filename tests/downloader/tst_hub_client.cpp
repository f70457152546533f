// hub::Client against the loopback Hub: search, info, the paginated tree, errors, redirects,
// and the settings read from the environment.
#include <QCryptographicHash>
#include <QtTest>

#include <chrono>

#include "ember/hub/client.h"
#include "hub_fixture.h"

using namespace ember::hub;
using namespace hub_test;

namespace {

QString sha256(const QByteArray& b) { return QCryptographicHash::hash(b, QCryptographicHash::Sha256).toHex(); }

}  // namespace

class TestHubClient : public QObject {
    Q_OBJECT

private:
    HubFixture hub_;

private slots:
    void initTestCase() {
        hub_.add_tiny_repo();
        hub_.add_file("PowerInfer/Gated-GGUF", "model.gguf", random_bytes(1000, 5));
        hub_.add_repo("PowerInfer/Gated-GGUF", {{"gated", true}});
        hub_.add_repo("Old/Tiny", {{"renamed_to", tiny_repo}});
        hub_.add_file("Evil/DotDot", "model.gguf", random_bytes(1000, 6));
        hub_.add_repo("Evil/DotDot", {{"extra_tree", QJsonArray{QJsonObject{
                                                         {"type", "file"}, {"oid", QString(40, 'a')},
                                                         {"size", 5}, {"path", "activation/../../../evil.txt"}}}}});
        QString why;
        QVERIFY2(hub_.start(&why), qPrintable(why));
    }

    void search_sends_the_query() {
        Client c(hub_.settings());
        SearchQuery q;
        q.search = "tiny";
        q.author = "PowerInfer";
        q.limit = 5;
        auto hits = c.search(q);
        QVERIFY2(hits.ok(), hits.ok() ? "" : hits.error().message.c_str());
        QCOMPARE(hits->size(), size_t(1));
        QCOMPARE(QString::fromStdString(hits->front().id), QString(tiny_repo));
        QTRY_VERIFY(hub_.stats()["last_search"].toString().contains("author=PowerInfer"));
        const QString sent = hub_.stats()["last_search"].toString();
        for (const char* part : {"search=tiny", "filter=gguf", "sort=downloads", "limit=5"}) QVERIFY2(sent.contains(part), qPrintable(sent));
    }

    void info_and_gated_flag() {
        Client c(hub_.settings());
        auto info = c.info(tiny_repo);
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().message.c_str());
        QCOMPARE(QString::fromStdString(info->sha), QString(tiny_sha));
        QCOMPARE(info->siblings.size(), size_t(9));
        auto gated = c.info("PowerInfer/Gated-GGUF", tiny_sha);
        QVERIFY(gated.ok());
        QVERIFY(gated->gated == Gated::Manual);
    }

    // The first bytes of a file, through the 302 to the CDN: with a Range, and from a server that
    // ignores it (the read stops at the bytes asked for); a file that is not there says so.
    void file_head_fetches_the_first_bytes() {
        const std::string model = "tiny.powerinfer.gguf";
        const QByteArray content = hub_.file(tiny_repo, QString::fromStdString(model));
        Client c(hub_.settings());
        const int ranges_before = hub_.stats()["range_requests"].toInt();
        auto head = c.file_head(tiny_repo, tiny_sha, model, 100000);
        QVERIFY2(head.ok(), head.ok() ? "" : head.error().message.c_str());
        QCOMPARE(QByteArray::fromStdString(*head), content.left(100000));
        QTRY_VERIFY(hub_.stats()["range_requests"].toInt() > ranges_before);

        hub_.set_faults(QJsonArray{QJsonObject{{"kind", "norange"}, {"path", QString::fromStdString(model)}}});
        auto ignored = c.file_head(tiny_repo, tiny_sha, model, 70000);
        hub_.set_faults({});
        QVERIFY2(ignored.ok(), ignored.ok() ? "" : ignored.error().message.c_str());
        QCOMPARE(QByteArray::fromStdString(*ignored), content.left(70000));

        auto whole = c.file_head(tiny_repo, tiny_sha, "config.json", 1 << 20);  // shorter than asked
        QVERIFY(whole.ok());
        QCOMPARE(QByteArray::fromStdString(*whole), hub_.file(tiny_repo, QStringLiteral("config.json")));

        auto missing = c.file_head(tiny_repo, tiny_sha, "nope.gguf", 1000);
        QVERIFY(!missing.ok());
        QVERIFY2(QString::fromStdString(missing.error().message).contains("nope.gguf"), missing.error().message.c_str());
        QVERIFY(!c.file_head(tiny_repo, tiny_sha, "../evil.gguf", 1000).ok());
    }

    void tree_follows_pages() {
        hub_.set_page_size(2);
        Client c(hub_.settings());
        auto files = c.tree(tiny_repo, tiny_sha);
        QVERIFY2(files.ok(), files.ok() ? "" : files.error().message.c_str());
        QCOMPARE(files->size(), size_t(9));  // every file, no directory
        int n_lfs = 0;
        for (const auto& f : *files) {
            QByteArray content = hub_.file(tiny_repo, QString::fromStdString(f.path));
            QCOMPARE(f.size, uint64_t(content.size()));
            if (f.is_lfs()) {
                ++n_lfs;
                QCOMPARE(QString::fromStdString(f.lfs_sha256), sha256(content));
            }
        }
        QCOMPARE(n_lfs, 6);
        hub_.set_page_size(3);
    }

    void errors_name_what_failed() {
        Client c(hub_.settings());
        auto missing = c.info("PowerInfer/Nope");
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error().message.find("repo PowerInfer/Nope not found") == 0, missing.error().message.c_str());
        auto rev = c.tree(tiny_repo, "no-such-branch");
        QVERIFY(!rev.ok());
        QVERIFY2(rev.error().message.find("revision not found") == 0, rev.error().message.c_str());
        auto bad_id = c.info("../etc");
        QVERIFY(!bad_id.ok());
        QVERIFY2(bad_id.error().message.find("not a Hub repo id") != std::string::npos, bad_id.error().message.c_str());
    }

    void renamed_repo_follows_relative_redirect() {
        Client c(hub_.settings());
        auto info = c.info("Old/Tiny");
        QVERIFY2(info.ok(), info.ok() ? "" : info.error().message.c_str());
        QCOMPARE(QString::fromStdString(info->id), QString(tiny_repo));
    }

    void dotdot_in_tree_is_refused() {
        Client c(hub_.settings());
        auto files = c.tree("Evil/DotDot", "main");
        QVERIFY(!files.ok());
        QVERIFY2(files.error().message.find("refusing Hub path 'activation/../../../evil.txt'") != std::string::npos,
                 files.error().message.c_str());
    }

    void proxy_setting_is_used() {
        Settings s = hub_.settings();
        s.proxy = hub_.endpoint().toStdString();  // the test server also answers proxy requests
        const int before = hub_.stats()["proxied"].toInt();
        Client c(s);
        QVERIFY(c.info(tiny_repo).ok());
        QTRY_VERIFY(hub_.stats()["proxied"].toInt() > before);
    }

    void settings_from_environment() {
        qputenv("HF_ENDPOINT", hub_.endpoint().toUtf8() + "/");
        qputenv("HF_TOKEN", " hf_abc \n");
        auto s = Settings::from_environment();
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().message.c_str());
        QCOMPARE(QString::fromStdString(s->endpoint), hub_.endpoint());
        QCOMPARE(QString::fromStdString(s->token), QString("hf_abc"));
        Client c(*s);
        QVERIFY(c.info(tiny_repo).ok());

        QTemporaryDir home;
        QFile token_file(home.path() + "/token");
        QVERIFY(token_file.open(QIODevice::WriteOnly));
        token_file.write("hf_from_file\n");
        token_file.close();
        qunsetenv("HF_TOKEN");
        qputenv("HF_HOME", home.path().toUtf8());
        s = Settings::from_environment();
        QVERIFY(s.ok());
        QCOMPARE(QString::fromStdString(s->token), QString("hf_from_file"));

        // Saving a token writes the same file, owner-only, as `hf auth login` would; forgetting
        // removes it.
        QVERIFY(ember::hub::save_token("  hf_saved \n").ok());
        QCOMPARE(QString::fromStdString(Settings::from_environment()->token), QString("hf_saved"));
        QCOMPARE(QFileInfo(home.path() + "/token").permissions() & (QFile::ReadGroup | QFile::ReadOther),
                 QFileDevice::Permissions());
        QVERIFY(!ember::hub::save_token("two words").ok());
        QVERIFY(ember::hub::forget_token().ok());
        QVERIFY(Settings::from_environment()->token.empty());
        QVERIFY(ember::hub::forget_token().ok());  // nothing left to remove is fine

        qputenv("HF_ENDPOINT", "http://hf-mirror.example.com");
        s = Settings::from_environment();
        QVERIFY(!s.ok());
        QVERIFY2(s.error().message.find("must use https") != std::string::npos, s.error().message.c_str());
        qputenv("HF_ENDPOINT", "https://hf-mirror.example.com");
        QVERIFY(Settings::from_environment().ok());
        qunsetenv("HF_ENDPOINT");
        qunsetenv("HF_HOME");

        QCOMPARE(Settings::from_environment()->stall_timeout, std::chrono::seconds(30));
        qputenv("HF_HUB_DOWNLOAD_TIMEOUT", "7");
        QCOMPARE(Settings::from_environment()->stall_timeout, std::chrono::seconds(7));
        for (const char* bad : {"0", "ten", "5s", "99999"}) {
            qputenv("HF_HUB_DOWNLOAD_TIMEOUT", bad);
            s = Settings::from_environment();
            QVERIFY2(!s.ok(), bad);
            QVERIFY2(s.error().message.find("HF_HUB_DOWNLOAD_TIMEOUT '" + std::string(bad) + "'") != std::string::npos,
                     s.error().message.c_str());
        }
        qunsetenv("HF_HUB_DOWNLOAD_TIMEOUT");
    }
};

QTEST_MAIN(TestHubClient)
#include "tst_hub_client.moc"

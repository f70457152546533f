// Downloads against the loopback Hub, clean and with every misbehaviour the test server knows:
// each ends in a verified file or a clear error, never a corrupt file under the final name.
#include <QCryptographicHash>
#include <QtTest>

#include <filesystem>
#include <mutex>

#include "ember/hub/classify.h"
#include "ember/hub/client.h"
#include "ember/hub/downloader.h"
#include "hub_fixture.h"

using namespace ember::hub;
using namespace hub_test;
namespace fs = std::filesystem;

namespace {

const char* big = "tiny.powerinfer.gguf";  // 3 MiB, LFS: resolved through the "CDN"

DownloadOptions quick_options() {
    DownloadOptions o;
    o.retry_delay = std::chrono::milliseconds(50);
    o.max_retry_delay = std::chrono::milliseconds(200);
    o.max_attempts = 4;
    o.progress_interval = std::chrono::milliseconds(50);
    return o;
}

QByteArray read(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestHubDownload : public QObject {
    Q_OBJECT

private:
    HubFixture hub_;
    std::vector<FileEntry> tiny_files_;

    std::vector<FileEntry> only(std::initializer_list<const char*> paths) {
        std::vector<FileEntry> out;
        for (const char* p : paths) {
            for (const auto& f : tiny_files_) {
                if (f.path == p) out.push_back(f);
            }
        }
        return out;
    }

    JobProgress run(const QString& models_dir, std::vector<FileEntry> files, const std::string& repo = tiny_repo,
                    bool with_token = false) {
        Downloader d(hub_.settings(with_token), quick_options());
        auto id = d.start(Job{repo, tiny_sha, std::move(files), models_dir.toStdString()});
        if (!id) {
            JobProgress refused;
            refused.state = JobState::Failed;
            refused.error = id.error().message;
            return refused;
        }
        return d.wait(*id);
    }

    QString final_path(const QString& models_dir, const char* path, const char* repo = tiny_repo) {
        return models_dir + "/" + repo + "/" + path;
    }

private slots:
    void initTestCase() {
        hub_.add_tiny_repo();
        hub_.add_file("PowerInfer/Gated-GGUF", "model.gguf", random_bytes(300000, 5));
        hub_.add_repo("PowerInfer/Gated-GGUF", {{"gated", true}});
        QString why;
        QVERIFY2(hub_.start(&why), qPrintable(why));
        Client c(hub_.settings());
        auto files = c.tree(tiny_repo, tiny_sha);
        QVERIFY2(files.ok(), files.ok() ? "" : files.error().message.c_str());
        tiny_files_ = *files;
    }

    void init() { hub_.set_faults({}); }

    void whole_repo_is_downloaded_and_verified() {
        QTemporaryDir dest;
        std::mutex mu;
        std::vector<JobProgress> seen;
        Downloader d(hub_.settings(), quick_options());
        auto id = d.start(Job{tiny_repo, tiny_sha, tiny_files_, dest.path().toStdString()}, [&](const JobProgress& p) {
            std::lock_guard lock(mu);
            seen.push_back(p);
        });
        QVERIFY(id.ok());
        JobProgress end = d.wait(*id);
        QVERIFY2(end.state == JobState::Done, end.error.c_str());
        QCOMPARE(end.bytes_done, end.bytes_total);
        for (const auto& f : tiny_files_) {
            QString path = QString::fromStdString(f.path);
            QCOMPARE(read(final_path(dest.path(), f.path.c_str())), hub_.file(tiny_repo, path));
            QVERIFY(!QFile::exists(final_path(dest.path(), f.path.c_str()) + ".part"));
        }
        std::lock_guard lock(mu);
        QVERIFY(!seen.empty());
        QVERIFY(seen.back().state == JobState::Done);
        for (size_t i = 1; i < seen.size(); ++i) QVERIFY(seen[i].bytes_done >= seen[i - 1].bytes_done);
        QCOMPARE(hub_.stats()["cdn_auth"].toInt(), 0);
    }

    void model_plan_fetches_one_gguf_and_activation() {
        QTemporaryDir dest;
        RepoLayout layout = classify(tiny_files_);
        auto plan = plan_model_download(layout, "tiny.q4.powerinfer.gguf");
        QVERIFY(plan.ok());
        QCOMPARE(plan->files.size(), size_t(1 + 4 + 2));
        JobProgress end = run(dest.path(), plan->files);
        QVERIFY2(end.state == JobState::Done, end.error.c_str());
        QCOMPARE(end.bytes_total, plan->total_bytes);
        QVERIFY(QFile::exists(final_path(dest.path(), "activation/activation_3.pt")));
        QVERIFY(!QFile::exists(final_path(dest.path(), big)));
    }

    void gated_repo_needs_a_token_that_never_reaches_the_cdn() {
        Client c(hub_.settings());
        auto files = c.tree("PowerInfer/Gated-GGUF", tiny_sha);
        QVERIFY(files.ok());
        QTemporaryDir dest;
        JobProgress refused = run(dest.path(), *files, "PowerInfer/Gated-GGUF");
        QVERIFY(refused.state == JobState::Failed);
        QVERIFY2(refused.error.find("PowerInfer/Gated-GGUF is a gated repo") == 0, refused.error.c_str());
        QVERIFY2(refused.error.find("HF_TOKEN") != std::string::npos, refused.error.c_str());
        // The kind of refusal and what was refused, for an app that words it its own way.
        QVERIFY(refused.error_kind == ember::hub::ErrorKind::Gated);
        QCOMPARE(QString::fromStdString(refused.error_subject), QStringLiteral("PowerInfer/Gated-GGUF"));
        QVERIFY(!QFile::exists(final_path(dest.path(), "model.gguf", "PowerInfer/Gated-GGUF")));

        JobProgress end = run(dest.path(), *files, "PowerInfer/Gated-GGUF", true);
        QVERIFY2(end.state == JobState::Done, end.error.c_str());
        QCOMPARE(read(final_path(dest.path(), "model.gguf", "PowerInfer/Gated-GGUF")),
                 hub_.file("PowerInfer/Gated-GGUF", "model.gguf"));
        QCOMPARE(hub_.stats()["cdn_auth"].toInt(), 0);
    }

    void misbehaviour_ends_in_a_verified_file_data() {
        QTest::addColumn<QJsonArray>("faults");
        QTest::addColumn<bool>("resumes");  // a Range request follows
        QTest::addColumn<int>("n_resolves");  // at least this many requests to /resolve/
        auto fault = [](const char* kind, QJsonObject extra = {}) {
            extra["kind"] = kind;
            extra["path"] = big;
            return extra;
        };
        QTest::newRow("drop") << QJsonArray{fault("drop", {{"at", 0.4}})} << true << 1;
        QTest::newRow("drop twice") << QJsonArray{fault("drop", {{"at", 0.3}, {"count", 2}})} << true << 1;
        QTest::newRow("stall") << QJsonArray{fault("stall", {{"at", 0.5}, {"seconds", 20}})} << true << 1;
        QTest::newRow("ignores range") << QJsonArray{fault("drop", {{"at", 0.5}}), fault("norange", {{"count", -1}})} << true << 1;
        QTest::newRow("wrong bytes once") << QJsonArray{fault("wrong")} << false << 2;
        QTest::newRow("expired url 403") << QJsonArray{fault("drop", {{"at", 0.5}}), fault("expire", {{"code", 403}})} << true << 2;
        QTest::newRow("expired url 410") << QJsonArray{fault("drop", {{"at", 0.5}}), fault("expire", {{"code", 410}})} << true << 2;
        QTest::newRow("503 twice") << QJsonArray{fault("status", {{"code", 503}, {"count", 2}})} << false << 1;
    }

    void misbehaviour_ends_in_a_verified_file() {
        QFETCH(QJsonArray, faults);
        QFETCH(bool, resumes);
        QFETCH(int, n_resolves);
        hub_.set_faults(faults);
        const int ranges_before = hub_.stats()["range_requests"].toInt();
        const int resolves_before = hub_.stats()["resolves"].toInt();
        QTemporaryDir dest;
        JobProgress end = run(dest.path(), only({big, "config.json"}));
        QVERIFY2(end.state == JobState::Done, end.error.c_str());
        QCOMPARE(read(final_path(dest.path(), big)), hub_.file(tiny_repo, big));
        QVERIFY(!QFile::exists(final_path(dest.path(), big) + ".part"));
        if (resumes) QTRY_VERIFY(hub_.stats()["range_requests"].toInt() > ranges_before);
        QTRY_VERIFY(hub_.stats()["resolves"].toInt() - resolves_before >= n_resolves + 1);  // + config.json
    }

    void wrong_bytes_every_time_is_a_clear_error() {
        hub_.set_faults({QJsonObject{{"kind", "wrong"}, {"path", big}, {"count", -1}}});
        QTemporaryDir dest;
        JobProgress end = run(dest.path(), only({big}));
        QVERIFY(end.state == JobState::Failed);
        QVERIFY2(end.error.find("sha256 mismatch for ") == 0, end.error.c_str());
        const std::string expected = tiny_files_.empty() ? "" : only({big}).front().lfs_sha256;
        QVERIFY2(end.error.find("expected " + expected + ", got ") != std::string::npos, end.error.c_str());
        QVERIFY(!QFile::exists(final_path(dest.path(), big)));
        QVERIFY(!QFile::exists(final_path(dest.path(), big) + ".part"));
    }

    void missing_file_is_a_clear_error() {
        QTemporaryDir dest;
        FileEntry ghost{"ghost.gguf", 10, std::string(40, 'a'), std::string(64, 'b')};
        JobProgress end = run(dest.path(), {ghost});
        QVERIFY(end.state == JobState::Failed);
        QVERIFY2(end.error.find("file not found in " + std::string(tiny_repo)) == 0, end.error.c_str());
        QVERIFY2(end.error.find("HTTP 404") != std::string::npos, end.error.c_str());
    }

    void dotdot_path_is_refused_before_anything_is_written() {
        QTemporaryDir dest;
        FileEntry evil{"activation/../../../evil.txt", 5, std::string(40, 'a'), ""};
        JobProgress end = run(dest.path(), {evil});
        QVERIFY(end.state == JobState::Failed);
        QVERIFY2(end.error.find("refusing Hub path 'activation/../../../evil.txt'") == 0, end.error.c_str());
        QVERIFY(QDir(dest.path()).isEmpty());
    }

    void resumes_a_part_file_left_by_an_earlier_run() {
        QTemporaryDir dest;
        const QByteArray content = hub_.file(tiny_repo, big);
        QDir().mkpath(dest.path() + "/" + tiny_repo);
        QFile part(final_path(dest.path(), big) + ".part");
        QVERIFY(part.open(QIODevice::WriteOnly));
        part.write(content.left(2 << 20));
        part.close();
        const int sent_before = hub_.stats()["bytes_sent"].toInt();
        JobProgress end = run(dest.path(), only({big}));
        QVERIFY2(end.state == JobState::Done, end.error.c_str());
        QCOMPARE(read(final_path(dest.path(), big)), content);
        QTRY_COMPARE(hub_.stats()["bytes_sent"].toInt() - sent_before, int(content.size() - (2 << 20)));
    }

    void corrupt_part_file_is_fetched_again_once() {
        QTemporaryDir dest;
        QDir().mkpath(dest.path() + "/" + tiny_repo);
        QFile part(final_path(dest.path(), big) + ".part");
        QVERIFY(part.open(QIODevice::WriteOnly));
        part.write(random_bytes(1 << 20, 99));
        part.close();
        JobProgress end = run(dest.path(), only({big}));
        QVERIFY2(end.state == JobState::Done, end.error.c_str());
        QCOMPARE(read(final_path(dest.path(), big)), hub_.file(tiny_repo, big));
    }

    void finished_file_is_kept_and_never_overwritten() {
        QTemporaryDir dest;
        QVERIFY(run(dest.path(), only({big, "config.json"})).state == JobState::Done);
        const int gets_before = hub_.stats()["cdn_gets"].toInt();
        JobProgress again = run(dest.path(), only({big, "config.json"}));
        QVERIFY2(again.state == JobState::Done, again.error.c_str());
        QCOMPARE(hub_.stats()["cdn_gets"].toInt(), gets_before);  // verified on disk, not fetched

        QFile config(final_path(dest.path(), "config.json"));
        QVERIFY(config.open(QIODevice::WriteOnly));
        config.write(QByteArray(22, 'x'));
        config.close();
        JobProgress refused = run(dest.path(), only({"config.json"}));
        QVERIFY(refused.state == JobState::Failed);
        QVERIFY2(refused.error.find("refusing to overwrite") == 0, refused.error.c_str());
        QCOMPARE(read(final_path(dest.path(), "config.json")), QByteArray(22, 'x'));
    }

    void cancel_leaves_no_final_file() {
        hub_.set_faults({QJsonObject{{"kind", "throttle"}, {"path", big}, {"bytes_per_second", 1 << 20}}});
        QTemporaryDir dest;
        Downloader d(hub_.settings(), quick_options());
        std::atomic<bool> moving{false};
        auto id = d.start(Job{tiny_repo, tiny_sha, only({big}), dest.path().toStdString()},
                          [&](const JobProgress& p) { moving = moving || p.bytes_done > 0; });
        QVERIFY(id.ok());
        QTRY_VERIFY(moving.load());
        QElapsedTimer timer;
        timer.start();
        d.cancel(*id);
        JobProgress end = d.wait(*id);
        QVERIFY(timer.elapsed() < 1000);
        QVERIFY(end.state == JobState::Cancelled);
        QVERIFY(!QFile::exists(final_path(dest.path(), big)));
        QVERIFY(QFileInfo(final_path(dest.path(), big) + ".part").size() < (3 << 20));
    }

    void two_jobs_share_the_thread() {
        QTemporaryDir a, b;
        Downloader d(hub_.settings(), quick_options());
        auto ja = d.start(Job{tiny_repo, tiny_sha, tiny_files_, a.path().toStdString()});
        auto jb = d.start(Job{tiny_repo, tiny_sha, tiny_files_, b.path().toStdString()});
        QVERIFY(ja.ok() && jb.ok());
        QVERIFY(d.wait(*ja).state == JobState::Done);
        QVERIFY(d.wait(*jb).state == JobState::Done);
        QCOMPARE(read(final_path(b.path(), big)), hub_.file(tiny_repo, big));
    }
};

QTEST_MAIN(TestHubDownload)
#include "tst_hub_download.moc"

// ember-hub as a user runs it: killed with SIGKILL at random points and run again until the
// file is whole; a full disk; one-line errors and exit codes.
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QtTest>

#include <sys/resource.h>

#include <csignal>

#include "hub_fixture.h"

using namespace hub_test;

namespace {

const char* big = "tiny.powerinfer.gguf";

// SIGKILL to a child that may have finished already: QProcess then reports pid 0, and kill(0, …)
// would hit this whole process group.
void kill_if_running(QProcess& p) {
    const qint64 pid = p.processId();
    if (p.state() != QProcess::NotRunning && pid > 0) ::kill(pid_t(pid), SIGKILL);
}

QByteArray read(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestHubCli : public QObject {
    Q_OBJECT

private:
    HubFixture hub_;

    void setup(QProcess& p, const QStringList& args) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HF_ENDPOINT", hub_.endpoint());
        env.remove("HF_TOKEN");
        env.insert("HF_TOKEN_PATH", hub_.dir() + "/no-token");
        p.setProcessEnvironment(env);
        p.setProgram(QStringLiteral(EMBER_TOOLS_DIR "/ember-hub"));
        p.setArguments(args);
    }

    struct Run {
        int code;
        QString out;
        QString err;
    };

    Run run(const QStringList& args) {
        QProcess p;
        setup(p, args);
        p.start();
        p.waitForFinished(30000);
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                p.readAllStandardError()};
    }

private slots:
    void initTestCase() {
        hub_.add_tiny_repo();
        hub_.add_file("PowerInfer/Gated-GGUF", "model.gguf", random_bytes(300000, 5));
        hub_.add_repo("PowerInfer/Gated-GGUF", {{"gated", true}});
        QString why;
        QVERIFY2(hub_.start(&why), qPrintable(why));
    }

    void init() { hub_.set_faults({}); }

    void killed_at_random_points_then_resumed() {
        // ~3 s for the whole file. The first kill may land anywhere, even before the first byte;
        // the others wait for new bytes on disk and then kill at a random moment after.
        hub_.set_faults({QJsonObject{{"kind", "throttle"}, {"path", big}, {"count", -1}, {"bytes_per_second", 1 << 20}}});
        const QString dest = hub_.dir() + "/killed";
        const QStringList args{"download", tiny_repo, "--include", big, "--include", "activation/*", "--dest", dest};
        const QString part = dest + "/" + tiny_repo + "/" + big + ".part";
        qint64 last_part = 0;
        for (int i = 0; i < 4; ++i) {
            const int delay_ms = int(QRandomGenerator::global()->bounded(i == 0 ? 400 : 300));
            QProcess p;
            setup(p, args);
            p.start();
            QVERIFY(p.waitForStarted());
            if (i > 0) QTRY_VERIFY(QFileInfo(part).size() > last_part);
            QTest::qWait(delay_ms);
            kill_if_running(p);
            QVERIFY(p.waitForFinished(5000));
            QVERIFY(!QFile::exists(dest + "/" + tiny_repo + "/" + big));
            const qint64 now = QFileInfo(part).size();
            qInfo("kill %d, %d ms after %s: .part had %lld bytes", i, delay_ms, i ? "new bytes" : "start", now);
            QVERIFY2(now >= last_part, "a resumed .part never shrinks");
            last_part = now;
        }
        QVERIFY(last_part > 0);
        Run done = run(args);
        QVERIFY2(done.code == 0, qPrintable(done.err));
        QCOMPARE(read(dest + "/" + tiny_repo + "/" + big), hub_.file(tiny_repo, big));
        QCOMPARE(read(dest + "/" + tiny_repo + "/activation/activation_2.pt"), hub_.file(tiny_repo, "activation/activation_2.pt"));
        QVERIFY(!QFile::exists(part));
        QVERIFY(hub_.stats()["range_requests"].toInt() > 0);
    }

    // docs/RELIABILITY.md: 20 downloads, each with a random server fault (none, a dropped
    // connection, a stall, wrong bytes, a disk that fills up) and killed with SIGKILL at 0-3 random
    // moments, then run again: every one ends in the verified file or, for the full disk, in a
    // one-line error naming the file, never in a wrong final file.
    void random_faults_and_kills_end_verified_or_clear() {
        constexpr int kRuns = 20;
        const QByteArray expected = hub_.file(tiny_repo, big);
        auto* random = QRandomGenerator::global();
        for (int run_index = 0; run_index < kRuns; ++run_index) {
            const int fault = int(random->bounded(5));
            const char* names[] = {"none", "drop", "stall", "wrong bytes", "disk full"};
            const double at = 0.1 + random->bounded(0.8);
            QJsonArray faults{QJsonObject{{"kind", "throttle"}, {"path", big}, {"count", -1},
                                          {"bytes_per_second", 4 << 20}}};
            if (fault == 1) faults.append(QJsonObject{{"kind", "drop"}, {"path", big}, {"at", at}});
            if (fault == 2) faults.append(QJsonObject{{"kind", "stall"}, {"path", big}, {"at", at}, {"seconds", 4}});
            if (fault == 3) faults.append(QJsonObject{{"kind", "wrong"}, {"path", big}});
            hub_.set_faults(faults);
            const qint64 disk_limit = fault == 4 ? qint64(64 << 10) + random->bounded(expected.size() - (64 << 10))
                                                 : 0;
            const QString dest = hub_.dir() + QStringLiteral("/random-%1").arg(run_index);
            const QString final_file = dest + "/" + tiny_repo + "/" + big;
            const QStringList args{"download", tiny_repo, "--include", big, "--dest", dest};
            auto start = [&](QProcess& p) {
                setup(p, args);
                QProcessEnvironment env = p.processEnvironment();
                env.insert("HF_HUB_DOWNLOAD_TIMEOUT", "1");
                p.setProcessEnvironment(env);
                if (disk_limit > 0) {
                    p.setChildProcessModifier([disk_limit] {
                        struct rlimit limit {rlim_t(disk_limit), rlim_t(disk_limit)};
                        ::setrlimit(RLIMIT_FSIZE, &limit);
                        ::signal(SIGXFSZ, SIG_IGN);
                    });
                }
                p.start();
            };
            const int kills = int(random->bounded(4));
            for (int k = 0; k < kills; ++k) {
                QProcess p;
                start(p);
                QVERIFY(p.waitForStarted());
                QTest::qWait(int(random->bounded(700)));
                kill_if_running(p);  // it may have finished first: a fast download, or a full disk
                if (p.state() != QProcess::NotRunning) QVERIFY(p.waitForFinished(5000));
                if (QFile::exists(final_file)) QCOMPARE(read(final_file), expected);
            }
            QProcess last;
            start(last);
            QVERIFY(last.waitForFinished(60000));
            const QString err = last.readAllStandardError();
            qInfo("run %d: %s, %d kills, exit %d", run_index, names[fault], kills, last.exitCode());
            if (fault == 4 && last.exitCode() != 0) {
                QCOMPARE(last.exitCode(), 1);
                QVERIFY2(err.startsWith("ember-hub: disk full writing " + final_file + ".part"), qPrintable(err));
                QCOMPARE(err.count('\n'), 1);
                QVERIFY(!QFile::exists(final_file));
            } else {
                QVERIFY2(last.exitCode() == 0, qPrintable(err));
                QCOMPARE(read(final_file), expected);
                QVERIFY(!QFile::exists(final_file + ".part"));
            }
        }
    }

    // The token goes in the Authorization header to the endpoint only: never into what ember-hub
    // prints, whether the token is right or wrong, the command succeeds or fails.
    void token_never_printed() {
        const QString dest = hub_.dir() + "/gated";
        for (const QString& secret : {QString::fromLatin1(token), QStringLiteral("hf_wrong_secret_4242")}) {
            for (const QStringList& args : {QStringList{"files", "PowerInfer/Gated-GGUF"},
                                            QStringList{"download", "PowerInfer/Gated-GGUF", "--dest", dest}}) {
                QProcess p;
                setup(p, args);
                QProcessEnvironment env = p.processEnvironment();
                env.insert("HF_TOKEN", secret);
                p.setProcessEnvironment(env);
                p.start();
                QVERIFY(p.waitForFinished(30000));
                const QByteArray out = p.readAllStandardOutput() + p.readAllStandardError();
                QVERIFY2(!out.contains(secret.toLatin1()), out.constData());
                QVERIFY2(!out.contains(secret.mid(3).toLatin1()), out.constData());
                if (secret == QLatin1String(token)) QVERIFY2(p.exitCode() == 0, out.constData());
            }
        }
        QCOMPARE(read(dest + "/PowerInfer/Gated-GGUF/model.gguf"), hub_.file("PowerInfer/Gated-GGUF", "model.gguf"));
    }

    void interrupt_cancels_and_keeps_the_part() {
        hub_.set_faults({QJsonObject{{"kind", "throttle"}, {"path", big}, {"count", -1}, {"bytes_per_second", 1 << 20}}});
        const QString dest = hub_.dir() + "/interrupted";
        const QString final_file = dest + "/" + tiny_repo + "/" + big;
        QProcess p;
        setup(p, {"download", tiny_repo, "--include", big, "--dest", dest});
        p.start();
        QTRY_VERIFY(QFileInfo(final_file + ".part").size() > 0);
        ::kill(pid_t(p.processId()), SIGINT);
        QVERIFY(p.waitForFinished(5000));
        QCOMPARE(p.exitCode(), 130);
        QVERIFY(p.readAllStandardError().contains("interrupted"));
        QVERIFY(!QFile::exists(final_file));
        QVERIFY(QFile::exists(final_file + ".part"));
    }

    void full_disk_names_the_file() {
        const QString dest = hub_.dir() + "/full";
        QProcess p;
        setup(p, {"download", tiny_repo, "--include", big, "--dest", dest});
        p.setChildProcessModifier([] {
            // Files past 1 MiB fail with EFBIG, as writes to a full disk fail with ENOSPC.
            struct rlimit limit {1 << 20, 1 << 20};
            ::setrlimit(RLIMIT_FSIZE, &limit);
            ::signal(SIGXFSZ, SIG_IGN);
        });
        p.start();
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 1);
        const QString err = p.readAllStandardError();
        QVERIFY2(err.startsWith("ember-hub: disk full writing " + dest + "/" + tiny_repo + "/" + big + ".part"), qPrintable(err));
        QCOMPARE(err.count('\n'), 1);
        QVERIFY(!QFile::exists(dest + "/" + tiny_repo + "/" + big));
    }

    void errors_are_one_line() {
        Run missing = run({"download", "PowerInfer/Nope", "--dest", hub_.dir() + "/none"});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.startsWith("ember-hub: repo PowerInfer/Nope not found"), qPrintable(missing.err));
        QCOMPARE(missing.err.count('\n'), 1);
        Run nothing = run({"download", tiny_repo, "--include", "*.safetensors", "--dest", hub_.dir() + "/none"});
        QCOMPARE(nothing.code, 1);
        QVERIFY2(nothing.err.contains("matches"), qPrintable(nothing.err));
        QCOMPARE(run({"frobnicate", "x"}).code, 2);
    }

    void search_and_files_print_plain_lines() {
        Run s = run({"search", "tiny"});
        QCOMPARE(s.code, 0);
        QVERIFY2(s.out.contains(tiny_repo), qPrintable(s.out));
        Run f = run({"files", tiny_repo});
        QCOMPARE(f.code, 0);
        QVERIFY2(f.out.contains(QRegularExpression("sparse +Q4 +1\\.0 MiB +tiny\\.q4\\.powerinfer\\.gguf")), qPrintable(f.out));
        QVERIFY2(f.out.contains("activation/activation_3.pt"), qPrintable(f.out));
        QVERIFY2(f.out.contains("model tiny.powerinfer.gguf: 7 files"), qPrintable(f.out));
    }
};

QTEST_MAIN(TestHubCli)
#include "tst_hub_cli.moc"

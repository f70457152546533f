// Crash safety: a writer streaming an answer is killed with SIGKILL at a random moment, again and
// again. Each time the file must pass SQLite's integrity checks, every finished message must be
// exactly as it was, and the killed answer must reopen as interrupted with all it had saved.
#include "app/store/chat_store.h"
#include "app/store/db.h"
#include "store_test_support.h"

#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>

using namespace ember::store;

namespace {

constexpr int kRounds = 50;  // docs/RELIABILITY.md: 50 kills per run
constexpr int kMaxStreamMs = 40;

QString expectedContent(qint64 tokens) {
    QString content;
    for (qint64 n = 0; n < tokens; ++n)
        content += QStringLiteral("token %1 ").arg(n);
    return content;
}

// The N of the last "saved N" line, or -1 when the writer saved nothing. Only whole lines count:
// the kill may cut the last one short.
qint64 lastSaved(const QByteArray& output) {
    qint64 saved = -1;
    for (const QByteArray& line : output.left(output.lastIndexOf('\n') + 1).split('\n'))
        if (line.startsWith("saved "))
            saved = line.mid(6).toLongLong();
    return saved;
}

}  // namespace

class TestStoreCrash : public QObject {
    Q_OBJECT

private slots:
    void killedWriterLeavesInterruptedAnswer();
};

void TestStoreCrash::killedWriterLeavesInterruptedAnswer() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("crash.db"));
    qint64 chat = 0;
    QList<Message> survivors;  // finished before any kill, then every interrupted answer
    {
        STORE_TAKE(store, ChatStore::open(path));
        STORE_TAKE(created, store->createChat(QStringLiteral("crash test")));
        STORE_TAKE(question, store->addMessage(created, std::nullopt, Role::User, QStringLiteral("What is sparse?")));
        STORE_TAKE(answer, store->beginAssistant(created, question));
        STORE_CHECK(store->finishAssistant(answer, QStringLiteral("Most neurons are zero."),
                                           GenerationStats{70, 5, 100.0, 5, 25.0, QStringLiteral("eos")}));
        STORE_TAKE(finished, store->activePath(created));
        survivors = finished;
        chat = created;
    }

    for (int round = 0; round < kRounds; ++round) {
        qint64 question = 0;
        {
            STORE_TAKE(store, ChatStore::open(path));
            STORE_TAKE(added, store->addMessage(chat, survivors.last().id, Role::User,
                                                QStringLiteral("Question %1?").arg(round)));
            STORE_TAKE(asked, store->message(added));
            survivors.append(asked);
            question = added;
        }

        QProcess writer;
        writer.start(QStringLiteral(EMBER_STORE_CRASH_WRITER),
                     {path, QString::number(chat), QString::number(question)});
        QVERIFY2(writer.waitForStarted(), qPrintable(writer.errorString()));
        while (!writer.canReadLine())
            QVERIFY2(writer.waitForReadyRead(5000), writer.readAllStandardError().constData());
        const QByteArray begun = writer.readLine().trimmed();
        QVERIFY2(begun.startsWith("begun "), begun.constData());
        const qint64 answer = begun.mid(6).toLongLong();

        // Timing decides where the kill lands, so a seed would not replay a run: plain random.
        QTest::qWait(QRandomGenerator::global()->bounded(kMaxStreamMs));
        writer.kill();  // SIGKILL on Unix: no destructor, no close, no flush runs in the writer
        QVERIFY(writer.waitForFinished(5000));
        QCOMPARE(writer.exitStatus(), QProcess::CrashExit);
        const qint64 saved = lastSaved(writer.readAllStandardOutput());

        {
            Db db(path);
            auto check = db.query("PRAGMA integrity_check");
            QVERIFY(check->step());
            QCOMPARE(check->columnText(0), QStringLiteral("ok"));
            db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
        }
        STORE_TAKE(store, ChatStore::open(path));
        for (const Message& survivor : survivors) {
            STORE_TAKE(now, store->message(survivor.id));
            QCOMPARE(now, survivor);
        }
        STORE_TAKE(killed, store->message(answer));
        QCOMPARE(killed.status, MessageStatus::Interrupted);
        const qint64 tokens = killed.content.count(QLatin1String("token "));
        QCOMPARE(killed.content, expectedContent(tokens));
        // Every update the writer reported had committed; one more may have committed unreported.
        QVERIFY2(tokens - 1 >= saved, qPrintable(QStringLiteral("round %1: %2 tokens saved, writer reported %3")
                                                     .arg(round)
                                                     .arg(tokens)
                                                     .arg(saved + 1)));
        survivors.append(killed);
    }
}

QTEST_GUILESS_MAIN(TestStoreCrash)
#include "tst_store_crash.moc"

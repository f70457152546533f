// Opening the file: fresh schema, reopening, migrations, refusal of a newer schema, and the RAII
// types underneath (Db, Statement, Transaction).
#include "app/store/chat_store.h"
#include "app/store/db.h"
#include "app/store/migrations.h"
#include "app/store/store_error.h"
#include "app/store/transaction.h"
#include "store_test_support.h"

#include <QTemporaryDir>

using namespace ember::store;

namespace {

qint64 scalar(Db& db, const char* sql) {
    auto q = db.query(sql);
    return q->step() ? q->columnInt(0) : -1;
}

QString text(Db& db, const char* sql) {
    auto q = db.query(sql);
    return q->step() ? q->columnText(0) : QString();
}

bool hasTable(Db& db, const QString& name) {
    auto q = db.query("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1");
    q->bindText(1, name);
    return q->step() && q->columnInt(0) == 1;
}

}  // namespace

class TestStoreSchema : public QObject {
    Q_OBJECT

private slots:
    void freshFileGetsSchema_data();
    void freshFileGetsSchema();
    void reopenKeepsData();
    void newerSchemaRefusedFileUntouched_data();
    void newerSchemaRefusedFileUntouched();
    void failingMigrationStepRollsBack();
    void transactionRollsBackUnlessCommitted();
    void errorsNameFileOperationAndSql();

private:
    QTemporaryDir m_dir;
};

void TestStoreSchema::freshFileGetsSchema_data() {
    QTest::addColumn<bool>("createEmptyFile");
    QTest::newRow("missing file") << false;
    QTest::newRow("empty file") << true;
}

void TestStoreSchema::freshFileGetsSchema() {
    QFETCH(bool, createEmptyFile);
    const QString path = m_dir.filePath(QStringLiteral("fresh-%1.db").arg(createEmptyFile));
    if (createEmptyFile) {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
    }
    {
        STORE_TAKE(store, ChatStore::open(path));
        STORE_TAKE(chats, store->listChats());
        QVERIFY(chats.isEmpty());
        // foreign_keys is on for the store's connection: a message for no chat is refused.
        QVERIFY(!store->addMessage(42, std::nullopt, Role::User, QStringLiteral("hi")).ok());
    }
    Db db(path);
    QCOMPARE(schemaVersion(db), 1);
    QCOMPARE(text(db, "PRAGMA journal_mode"), QStringLiteral("wal"));
    QCOMPARE(scalar(db, "SELECT count(*) FROM pragma_table_list WHERE name IN ('chats', 'messages') AND strict = 1"),
             2);
    QVERIFY(hasTable(db, QStringLiteral("messages_fts")));
}

void TestStoreSchema::reopenKeepsData() {
    const QString path = m_dir.filePath(QStringLiteral("reopen.db"));
    qint64 chatId = 0;
    qint64 messageId = 0;
    {
        STORE_TAKE(store, ChatStore::open(path));
        STORE_TAKE(created, store->createChat(QStringLiteral("Kept")));
        STORE_TAKE(added, store->addMessage(created, std::nullopt, Role::User, QStringLiteral("still here?")));
        chatId = created;
        messageId = added;
    }
    STORE_TAKE(store, ChatStore::open(path));
    STORE_TAKE(chat, store->chat(chatId));
    QCOMPARE(chat.title, QStringLiteral("Kept"));
    QCOMPARE(chat.activeLeaf, std::optional(messageId));
    STORE_TAKE(branch, store->activePath(chatId));
    QCOMPARE(branch.size(), 1);
    QCOMPARE(branch.first().content, QStringLiteral("still here?"));
    Db db(path);
    QCOMPARE(schemaVersion(db), 1);
}

void TestStoreSchema::newerSchemaRefusedFileUntouched_data() {
    QTest::addColumn<bool>("wal");
    QTest::newRow("WAL file written by a newer Ember") << true;
    QTest::newRow("rollback-journal file") << false;
}

void TestStoreSchema::newerSchemaRefusedFileUntouched() {
    QFETCH(bool, wal);
    const QString path = m_dir.filePath(QStringLiteral("newer-%1.db").arg(wal));
    if (wal) {
        STORE_TAKE(store, ChatStore::open(path));
        STORE_CHECK(store->createChat(QStringLiteral("from the future")));
    }
    {
        Db db(path);
        db.exec("CREATE TABLE future_things (x INTEGER) STRICT; PRAGMA user_version = 7;");
    }
    const QByteArray before = fileBytes(path);
    QVERIFY(!before.isEmpty());

    const auto refused = ChatStore::open(path);
    QVERIFY(!refused.ok());
    QVERIFY2(refused.error().contains(path), qPrintable(refused.error()));
    QVERIFY2(refused.error().contains(QLatin1String("open")), qPrintable(refused.error()));
    QVERIFY2(refused.error().contains(QLatin1String("schema version 7")), qPrintable(refused.error()));
    QVERIFY2(refused.error().contains(QLatin1String("the 1 this version")), qPrintable(refused.error()));

    QCOMPARE(fileBytes(path), before);
    QVERIFY(!QFile::exists(path + QLatin1String("-wal")));
    QVERIFY(!QFile::exists(path + QLatin1String("-journal")));
}

void TestStoreSchema::failingMigrationStepRollsBack() {
    const QString path = m_dir.filePath(QStringLiteral("migrate.db"));
    Db db(path);
    const Migration createA{1, [](Db& d) { d.exec("CREATE TABLE a (x INTEGER) STRICT"); }};
    const Migration brokenB{2, [](Db& d) {
                                d.exec("CREATE TABLE b (x INTEGER) STRICT");
                                d.exec("INSERT INTO no_such_table VALUES (1)");
                            }};
    const Migration createB{2, [](Db& d) { d.exec("CREATE TABLE b (x INTEGER) STRICT"); }};

    const Migration broken[] = {createA, brokenB};
    try {
        migrate(db, broken);
        QFAIL("a failing step must throw");
    } catch (const StoreError& e) {
        QVERIFY2(e.message().contains(QLatin1String("schema version 2")), qPrintable(e.message()));
        QVERIFY2(e.message().contains(QLatin1String("no_such_table")), qPrintable(e.message()));
    }
    QCOMPARE(schemaVersion(db), 1);
    QVERIFY(hasTable(db, QStringLiteral("a")));
    QVERIFY(!hasTable(db, QStringLiteral("b")));

    // The fixed step upgrades the version-1 file, and running the list again changes nothing.
    const Migration fixed[] = {createA, createB};
    migrate(db, fixed);
    migrate(db, fixed);
    QCOMPARE(schemaVersion(db), 2);
    QVERIFY(hasTable(db, QStringLiteral("b")));
}

void TestStoreSchema::transactionRollsBackUnlessCommitted() {
    Db db(m_dir.filePath(QStringLiteral("transactions.db")));
    db.exec("CREATE TABLE t (x INTEGER) STRICT");
    {
        Transaction transaction(db);
        db.exec("INSERT INTO t VALUES (1)");
    }
    QCOMPARE(scalar(db, "SELECT count(*) FROM t"), 0);
    try {
        Transaction transaction(db);
        db.exec("INSERT INTO t VALUES (2)");
        throw StoreError(QStringLiteral("something went wrong half-way"));
    } catch (const StoreError&) {
    }
    QCOMPARE(scalar(db, "SELECT count(*) FROM t"), 0);
    {
        Transaction transaction(db);
        db.exec("INSERT INTO t VALUES (3)");
        transaction.commit();
    }
    QCOMPARE(scalar(db, "SELECT x FROM t"), 3);
    QVERIFY(!db.inTransaction());
}

void TestStoreSchema::errorsNameFileOperationAndSql() {
    Db db(m_dir.filePath(QStringLiteral("errors.db")));
    try {
        db.query("SELECT x FROM nowhere");
        QFAIL("preparing bad SQL must throw");
    } catch (const StoreError& e) {
        QVERIFY2(e.message().contains(QLatin1String("prepare")), qPrintable(e.message()));
        QVERIFY2(e.message().contains(QLatin1String("SELECT x FROM nowhere")), qPrintable(e.message()));
    }

    const QString path = m_dir.filePath(QStringLiteral("store-errors.db"));
    STORE_TAKE(store, ChatStore::open(path));
    const auto renamed = store->renameChat(12345, QStringLiteral("nobody"));
    QVERIFY(!renamed.ok());
    QCOMPARE(renamed.error(), QStringLiteral("%1: rename chat 12345: chat 12345 does not exist").arg(path));

    const QString missingDir = m_dir.filePath(QStringLiteral("no/such/dir/chats.db"));
    const auto notOpened = ChatStore::open(missingDir);
    QVERIFY(!notOpened.ok());
    QVERIFY2(notOpened.error().startsWith(missingDir + QLatin1String(": open: ")), qPrintable(notOpened.error()));

    const QString garbage = m_dir.filePath(QStringLiteral("garbage.db"));
    {
        QFile file(garbage);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray(4096, 'x'));
    }
    const auto notADatabase = ChatStore::open(garbage);
    QVERIFY(!notADatabase.ok());
    QVERIFY2(notADatabase.error().contains(garbage), qPrintable(notADatabase.error()));
    QCOMPARE(fileBytes(garbage), QByteArray(4096, 'x'));
}

QTEST_GUILESS_MAIN(TestStoreSchema)
#include "tst_store_schema.moc"

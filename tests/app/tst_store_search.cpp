// Full-text search: matching, snippets, what is and is not indexed, and user input that is not
// FTS5 syntax.
#include "app/store/chat_store.h"
#include "app/store/db.h"
#include "app/store/search_query.h"
#include "store_test_support.h"

#include <QTemporaryDir>

using namespace ember::store;

class TestStoreSearch : public QObject {
    Q_OBJECT

private slots:
    void init();
    void findsWordsPrefixesAndDiacritics();
    void answersAreIndexedWhenFinishedOrInterrupted();
    void deletedChatsAreNotFound();
    void anyInputIsSafe_data();
    void anyInputIsSafe();
    void matchExpression_data();
    void matchExpression();
    void cleanup();

private:
    QTemporaryDir m_dir;
    QString m_path;
    std::unique_ptr<ChatStore> m_store;
    qint64 m_chat = 0;
    qint64 m_fox = 0;
};

void TestStoreSearch::init() {
    static int fileNumber = 0;
    m_path = m_dir.filePath(QStringLiteral("search-%1.db").arg(++fileNumber));
    STORE_TAKE(store, ChatStore::open(m_path));
    m_store = std::move(store);
    STORE_TAKE(chat, m_store->createChat(QStringLiteral("Animals")));
    STORE_TAKE(fox, m_store->addMessage(chat, std::nullopt, Role::User, QStringLiteral("The quick brown fox jumps")));
    STORE_CHECK(m_store->addMessage(chat, fox, Role::Assistant, QStringLiteral("Lazy dogs sleep all day.")));
    STORE_CHECK(m_store->addMessage(chat, std::nullopt, Role::User, QStringLiteral("Un café très naïf")));
    m_chat = chat;
    m_fox = fox;
}

void TestStoreSearch::cleanup() {
    m_store.reset();
    // Whatever the test did, the external-content index still matches the messages table.
    Db db(m_path);
    db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
}

void TestStoreSearch::findsWordsPrefixesAndDiacritics() {
    STORE_TAKE(hits, m_store->search(QStringLiteral("brown fox")));
    QCOMPARE(hits.size(), 1);
    QCOMPARE(hits[0].chatId, m_chat);
    QCOMPARE(hits[0].messageId, m_fox);
    QCOMPARE(hits[0].chatTitle, QStringLiteral("Animals"));
    const QString marked = QChar(kMatchStart) + QStringLiteral("brown") + QChar(kMatchEnd);
    QVERIFY2(hits[0].snippet.contains(marked), qPrintable(hits[0].snippet));

    STORE_TAKE(prefix, m_store->search(QStringLiteral("jum")));
    QCOMPARE(prefix.size(), 1);
    STORE_TAKE(wholeWordOnly, m_store->search(QStringLiteral("jum ")));
    QVERIFY(wholeWordOnly.isEmpty());
    STORE_TAKE(folded, m_store->search(QStringLiteral("CAFE naif")));
    QCOMPARE(folded.size(), 1);
    STORE_TAKE(allWords, m_store->search(QStringLiteral("fox cat")));
    QVERIFY(allWords.isEmpty());
    STORE_TAKE(limited, m_store->search(QStringLiteral("a"), 1));
    QCOMPARE(limited.size(), 1);
}

void TestStoreSearch::answersAreIndexedWhenFinishedOrInterrupted() {
    STORE_TAKE(answer, m_store->beginAssistant(m_chat, m_fox));
    STORE_CHECK(m_store->updateGenerating(answer, QStringLiteral("zebras have")));
    STORE_TAKE(whileStreaming, m_store->search(QStringLiteral("zebras")));
    QVERIFY(whileStreaming.isEmpty());
    STORE_CHECK(m_store->finishAssistant(answer, QStringLiteral("zebras have stripes"), {}));
    STORE_TAKE(finished, m_store->search(QStringLiteral("stripes")));
    QCOMPARE(finished.size(), 1);
    QCOMPARE(finished[0].messageId, answer);

    STORE_TAKE(cut, m_store->beginAssistant(m_chat, m_fox));
    STORE_CHECK(m_store->updateGenerating(cut, QStringLiteral("okapis are cut short")));
    m_store.reset();
    STORE_TAKE(reopened, ChatStore::open(m_path));
    STORE_TAKE(interrupted, reopened->search(QStringLiteral("okapis")));
    QCOMPARE(interrupted.size(), 1);
    QCOMPARE(interrupted[0].messageId, cut);
}

void TestStoreSearch::deletedChatsAreNotFound() {
    STORE_CHECK(m_store->deleteChat(m_chat));
    STORE_TAKE(deleted, m_store->search(QStringLiteral("fox")));
    QVERIFY(deleted.isEmpty());
    STORE_CHECK(m_store->restoreChat(m_chat));
    STORE_TAKE(restored, m_store->search(QStringLiteral("fox")));
    QCOMPARE(restored.size(), 1);
}

void TestStoreSearch::anyInputIsSafe_data() {
    QTest::addColumn<QString>("text");
    for (const char* text : {"", "   ", "\"", "fox\"", "c++", "AND", "fox OR", "NEAR(fox", "*", "-fox", "--", "^fox",
                             "col:fox", "(fox", "fox)"})
        QTest::newRow(text) << QString::fromLatin1(text);
}

void TestStoreSearch::anyInputIsSafe() {
    QFETCH(QString, text);
    const auto hits = m_store->search(text);
    QVERIFY2(hits.ok(), qPrintable(hits.error()));
}

void TestStoreSearch::matchExpression_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("expression");
    QTest::newRow("words, last as prefix") << "brown  fox" << R"("brown" "fox"*)";
    QTest::newRow("trailing space: whole words") << "brown fox " << R"("brown" "fox")";
    QTest::newRow("quotes are text") << R"(say "hi")" << R"("say" """hi"""*)";
    QTest::newRow("operators are text") << "fox NOT dog" << R"("fox" "NOT" "dog"*)";
    QTest::newRow("punctuation only") << "-- ::" << "";
    QTest::newRow("empty") << "" << "";
}

void TestStoreSearch::matchExpression() {
    QFETCH(QString, text);
    QFETCH(QString, expression);
    QCOMPARE(ftsMatchExpression(text), expression);
}

QTEST_GUILESS_MAIN(TestStoreSearch)
#include "tst_store_search.moc"

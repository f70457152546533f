// ChatStore's chats and message trees: list order, delete with undo, branches,
// streaming an answer, and what a reopen does to an answer left generating.
#include "app/store/chat_store.h"
#include "app/store/db.h"
#include "store_test_support.h"

#include <QJsonObject>
#include <QTemporaryDir>

using namespace ember::store;

namespace {

QList<qint64> ids(const QList<Chat>& chats) {
    QList<qint64> result;
    for (const Chat& chat : chats)
        result.append(chat.id);
    return result;
}

QList<qint64> ids(const QList<Message>& messages) {
    QList<qint64> result;
    for (const Message& message : messages)
        result.append(message.id);
    return result;
}

}  // namespace

class TestChatStore : public QObject {
    Q_OBJECT

private slots:
    void init();
    void chatsListPinnedThenRecent();
    void deleteWithUndo();
    void branchesSiblingsAndPaths();
    void parentMustBeInTheSameChat();
    void streamingAnAnswer();
    void reopenMarksGeneratingInterrupted();
    void workerOpenLeavesStreamingAlone();
    void purgeRemovesALongBranch();

private:
    QTemporaryDir m_dir;
    QString m_path;
    int m_fileNumber = 0;
};

void TestChatStore::init() {
    m_path = m_dir.filePath(QStringLiteral("chats-%1.db").arg(++m_fileNumber));
}

void TestChatStore::chatsListPinnedThenRecent() {
    STORE_TAKE(store, ChatStore::open(m_path));
    const ChatOptions options{QStringLiteral("You are terse."), QJsonObject{{QStringLiteral("temperature"), 0.7}},
                              QStringLiteral("/models/relu-llama.gguf")};
    STORE_TAKE(a, store->createChat(QStringLiteral("A"), options));
    STORE_TAKE(b, store->createChat(QStringLiteral("B")));
    STORE_TAKE(c, store->createChat(QStringLiteral("C")));
    QTest::qWait(2);  // so the message below lands in a later millisecond than the chats' creation
    STORE_CHECK(store->addMessage(a, std::nullopt, Role::User, QStringLiteral("bump")));
    STORE_TAKE(byRecency, store->listChats());
    QCOMPARE(ids(byRecency), (QList<qint64>{a, c, b}));

    STORE_CHECK(store->setPinned(b, true));
    STORE_CHECK(store->renameChat(c, QStringLiteral("C renamed")));
    STORE_TAKE(listed, store->listChats());
    QCOMPARE(ids(listed), (QList<qint64>{b, a, c}));
    QVERIFY(listed[0].pinned);
    QCOMPARE(listed[2].title, QStringLiteral("C renamed"));
    QCOMPARE(listed[1].options, options);

    const ChatOptions changed{QStringLiteral("Be kind."), QJsonObject{{QStringLiteral("topK"), 40}}, QString()};
    STORE_CHECK(store->setChatOptions(a, changed));
    STORE_TAKE(chatA, store->chat(a));
    QCOMPARE(chatA.options, changed);
    QVERIFY(!store->setPinned(999, true).ok());
}

void TestChatStore::deleteWithUndo() {
    STORE_TAKE(store, ChatStore::open(m_path));
    STORE_TAKE(kept, store->createChat(QStringLiteral("kept")));
    STORE_TAKE(doomed, store->createChat(QStringLiteral("doomed")));
    STORE_CHECK(store->addMessage(doomed, std::nullopt, Role::User, QStringLiteral("hello")));

    STORE_CHECK(store->deleteChat(doomed));
    STORE_TAKE(afterDelete, store->listChats());
    QCOMPARE(ids(afterDelete), QList<qint64>{kept});
    QVERIFY(!store->chat(doomed).ok());
    QVERIFY(!store->deleteChat(doomed).ok());

    STORE_CHECK(store->restoreChat(doomed));
    STORE_TAKE(afterUndo, store->listChats());
    QCOMPARE(afterUndo.size(), 2);
    STORE_TAKE(restoredPath, store->activePath(doomed));
    QCOMPARE(restoredPath.size(), 1);
    QVERIFY(!store->restoreChat(doomed).ok());  // not deleted any more

    // The undo lasts until the next primary open.
    STORE_CHECK(store->deleteChat(doomed));
    store.reset();
    STORE_TAKE(reopened, ChatStore::open(m_path));
    const auto restore = reopened->restoreChat(doomed);
    QVERIFY(!restore.ok());
    QVERIFY2(restore.error().contains(QLatin1String("is not a deleted chat")), qPrintable(restore.error()));
    Db db(m_path);
    auto q = db.query("SELECT count(*) FROM messages");
    QVERIFY(q->step());
    QCOMPARE(q->columnInt(0), 0);
}

void TestChatStore::branchesSiblingsAndPaths() {
    STORE_TAKE(store, ChatStore::open(m_path));
    STORE_TAKE(chat, store->createChat(QStringLiteral("branches")));
    // u1 → a1; u1 edited into u2 (a sibling at the root) → a2, regenerated into a3 (sibling of a2).
    STORE_TAKE(u1, store->addMessage(chat, std::nullopt, Role::User, QStringLiteral("first question")));
    STORE_TAKE(a1, store->addMessage(chat, u1, Role::Assistant, QStringLiteral("first answer")));
    STORE_TAKE(u2, store->addMessage(chat, std::nullopt, Role::User, QStringLiteral("edited question")));
    STORE_TAKE(a2, store->addMessage(chat, u2, Role::Assistant, QStringLiteral("answer")));
    STORE_TAKE(a3, store->addMessage(chat, u2, Role::Assistant, QStringLiteral("regenerated answer")));

    STORE_TAKE(roots, store->siblings(u1));
    QCOMPARE(roots.ids, (QList<qint64>{u1, u2}));
    QCOMPARE(roots.index, 0);
    STORE_TAKE(answers, store->siblings(a3));
    QCOMPARE(answers.ids, (QList<qint64>{a2, a3}));
    QCOMPARE(answers.index, 1);
    STORE_TAKE(only, store->siblings(a1));
    QCOMPARE(only.ids, QList<qint64>{a1});

    STORE_TAKE(active, store->activePath(chat));
    QCOMPARE(ids(active), (QList<qint64>{u2, a3}));
    QCOMPARE(active[1].parentId, std::optional(u2));

    // ◀ on the root: the old branch, down to its newest message.
    STORE_TAKE(old, store->selectBranch(u1));
    QCOMPARE(ids(old), (QList<qint64>{u1, a1}));
    STORE_TAKE(activeNow, store->activePath(chat));
    QCOMPARE(ids(activeNow), (QList<qint64>{u1, a1}));
    // ▶ back, then ◀ on the answers.
    STORE_TAKE(back, store->selectBranch(u2));
    QCOMPARE(ids(back), (QList<qint64>{u2, a3}));
    STORE_TAKE(firstTry, store->selectBranch(a2));
    QCOMPARE(ids(firstTry), (QList<qint64>{u2, a2}));

    QVERIFY(!store->siblings(9999).ok());
    QVERIFY(!store->selectBranch(9999).ok());
}

void TestChatStore::parentMustBeInTheSameChat() {
    STORE_TAKE(store, ChatStore::open(m_path));
    STORE_TAKE(one, store->createChat(QStringLiteral("one")));
    STORE_TAKE(two, store->createChat(QStringLiteral("two")));
    STORE_TAKE(inOne, store->addMessage(one, std::nullopt, Role::User, QStringLiteral("hi")));

    const auto crossed = store->addMessage(two, inOne, Role::Assistant, QStringLiteral("wrong chat"));
    QVERIFY(!crossed.ok());
    QVERIFY2(crossed.error().contains(QStringLiteral("belongs to chat %1, not chat %2").arg(one).arg(two)),
             qPrintable(crossed.error()));
    const auto missing = store->beginAssistant(one, 777);
    QVERIFY(!missing.ok());
    QVERIFY2(missing.error().contains(QLatin1String("message 777 does not exist")), qPrintable(missing.error()));
    STORE_TAKE(twoPath, store->activePath(two));
    QVERIFY(twoPath.isEmpty());
}

void TestChatStore::streamingAnAnswer() {
    STORE_TAKE(store, ChatStore::open(m_path));
    STORE_TAKE(chat, store->createChat(QStringLiteral("stream")));
    STORE_TAKE(question, store->addMessage(chat, std::nullopt, Role::User, QStringLiteral("Count to three.")));
    STORE_TAKE(answer, store->beginAssistant(chat, question));

    STORE_TAKE(begun, store->message(answer));
    QCOMPARE(begun.status, MessageStatus::Generating);
    QCOMPARE(begun.role, Role::Assistant);
    QVERIFY(begun.content.isEmpty());
    STORE_TAKE(shown, store->activePath(chat));
    QCOMPARE(ids(shown), (QList<qint64>{question, answer}));

    for (const char* soFar : {"One", "One, two", "One, two,"})
        STORE_CHECK(store->updateGenerating(answer, QString::fromLatin1(soFar)));
    STORE_TAKE(streaming, store->message(answer));
    QCOMPARE(streaming.content, QStringLiteral("One, two,"));

    const GenerationStats stats{80, 12, 240.5, 6, 31.25, QStringLiteral("eos")};
    STORE_CHECK(store->finishAssistant(answer, QStringLiteral("One, two, three."), stats));
    STORE_TAKE(finished, store->message(answer));
    QCOMPARE(finished.status, MessageStatus::Complete);
    QCOMPARE(finished.content, QStringLiteral("One, two, three."));
    QCOMPARE(finished.stats, stats);

    const auto late = store->updateGenerating(answer, QStringLiteral("One, two, three. Four"));
    QVERIFY(!late.ok());
    QVERIFY2(late.error().contains(QLatin1String("is not being generated")), qPrintable(late.error()));
    QVERIFY(!store->finishAssistant(answer, QString(), {}).ok());
}

void TestChatStore::reopenMarksGeneratingInterrupted() {
    qint64 answer = 0;
    {
        STORE_TAKE(store, ChatStore::open(m_path));
        STORE_TAKE(chat, store->createChat(QStringLiteral("crash")));
        STORE_TAKE(begun, store->beginAssistant(chat, std::nullopt));
        STORE_CHECK(store->updateGenerating(begun, QStringLiteral("partial ans")));
        answer = begun;
    }
    STORE_TAKE(store, ChatStore::open(m_path));
    STORE_TAKE(message, store->message(answer));
    QCOMPARE(message.status, MessageStatus::Interrupted);
    QCOMPARE(message.content, QStringLiteral("partial ans"));
    QVERIFY(!store->updateGenerating(answer, QStringLiteral("partial answer")).ok());
}

void TestChatStore::workerOpenLeavesStreamingAlone() {
    STORE_TAKE(primary, ChatStore::open(m_path));
    STORE_TAKE(chat, primary->createChat(QStringLiteral("busy")));
    STORE_TAKE(answer, primary->beginAssistant(chat, std::nullopt));
    STORE_CHECK(primary->deleteChat(chat));
    STORE_TAKE(kept, primary->createChat(QStringLiteral("kept")));
    STORE_TAKE(keptAnswer, primary->beginAssistant(kept, std::nullopt));

    STORE_TAKE(worker, ChatStore::open(m_path, ChatStore::OpenMode::Worker));
    STORE_TAKE(seen, worker->message(keptAnswer));
    QCOMPARE(seen.status, MessageStatus::Generating);
    STORE_CHECK(primary->updateGenerating(keptAnswer, QStringLiteral("still streaming")));
    STORE_CHECK(primary->restoreChat(chat));  // the worker purged nothing
    STORE_CHECK(primary->updateGenerating(answer, QStringLiteral("also streaming")));
}

void TestChatStore::purgeRemovesALongBranch() {
    // Deep enough that a per-message cascade would hit SQLite's trigger depth limit (1000).
    constexpr int kMessages = 1500;
    STORE_TAKE(store, ChatStore::open(m_path));
    STORE_TAKE(chat, store->createChat(QStringLiteral("long")));
    std::optional<qint64> parent;
    for (int i = 0; i < kMessages; ++i) {
        STORE_TAKE(added, store->addMessage(chat, parent, i % 2 ? Role::Assistant : Role::User,
                                            QStringLiteral("turn %1").arg(i)));
        parent = added;
    }
    STORE_TAKE(branch, store->activePath(chat));
    QCOMPARE(branch.size(), kMessages);
    STORE_CHECK(store->deleteChat(chat));
    STORE_CHECK(store->purgeDeletedChats());
    STORE_TAKE(hits, store->search(QStringLiteral("turn")));
    QVERIFY(hits.isEmpty());

    Db db(m_path);
    auto count = db.query("SELECT count(*) FROM messages");
    QVERIFY(count->step());
    QCOMPARE(count->columnInt(0), 0);
    db.exec("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')");
}

QTEST_GUILESS_MAIN(TestChatStore)
#include "tst_chat_store.moc"

// Export (Markdown, JSON) and import (JSON): the round trip loses nothing, and a bad file is
// refused with its first bad field named and nothing written.
#include "app/store/chat_json.h"
#include "app/store/chat_store.h"
#include "app/store/db.h"
#include "store_test_support.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>

#include <functional>

using namespace ember::store;

namespace {

// The file's message ids replaced by their positions, so exports of two stores compare equal.
QList<ChatRecord> withoutIds(QList<ChatRecord> records) {
    for (ChatRecord& record : records) {
        QHash<qint64, qint64> position;
        for (qsizetype i = 0; i < record.messages.size(); ++i)
            position.insert(record.messages[i].id, i);
        for (Message& message : record.messages) {
            message.id = position.value(message.id);
            message.chatId = 0;
            if (message.parentId)
                message.parentId = position.value(*message.parentId);
        }
        if (record.chat.activeLeaf)
            record.chat.activeLeaf = position.value(*record.chat.activeLeaf);
    }
    return records;
}

qint64 rowCount(const QString& path, const char* sql) {
    Db db(path);
    auto q = db.query(sql);
    return q->step() ? q->columnInt(0) : -1;
}

// A small valid export; the malformed rows each break one thing in it.
QJsonObject validExport() {
    const QJsonObject question{{"id", 1}, {"parent", QJsonValue()}, {"role", "user"}, {"content", "Hi"},
                               {"created", "2025-03-01T10:00:00.000Z"}, {"status", "complete"}};
    const QJsonObject answer{{"id", 2}, {"parent", 1}, {"role", "assistant"}, {"content", "Hello!"},
                             {"created", "2025-03-01T10:00:01.000Z"}, {"status", "complete"},
                             {"stats", QJsonObject{{"genTokens", 3}, {"genTps", 20.5}}}};
    const QJsonObject chat{{"title", "Greeting"}, {"created", "2025-03-01T10:00:00.000Z"},
                           {"updated", "2025-03-01T10:00:01.000Z"}, {"activeLeaf", 2},
                           {"messages", QJsonArray{question, answer}}};
    return QJsonObject{{"format", "ember-chats"}, {"version", 1}, {"chats", QJsonArray{chat, chat}}};
}

// `edit` changes the second chat, so a half-done import would have written the first.
QByteArray brokenExport(const std::function<void(QJsonObject& chat)>& edit) {
    QJsonObject root = validExport();
    QJsonArray chats = root.value("chats").toArray();
    QJsonObject chat = chats[1].toObject();
    edit(chat);
    chats[1] = chat;
    root.insert("chats", chats);
    return QJsonDocument(root).toJson();
}

void editMessage(QJsonObject& chat, int index, const char* key, const QJsonValue& value) {
    QJsonArray messages = chat.value("messages").toArray();
    QJsonObject message = messages[index].toObject();
    message.insert(QLatin1String(key), value);
    messages[index] = message;
    chat.insert("messages", messages);
}

}  // namespace

class TestStoreTransfer : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void jsonRoundTripLosesNothing();
    void markdownShowsTheActiveBranch();
    void malformedImportWritesNothing_data();
    void malformedImportWritesNothing();

private:
    QTemporaryDir m_dir;
    QString m_source;
    qint64 m_story = 0;
};

// Two chats: one with branches, statistics, options, a pin and an interrupted answer.
void TestStoreTransfer::initTestCase() {
    m_source = m_dir.filePath(QStringLiteral("source.db"));
    {
        STORE_TAKE(store, ChatStore::open(m_source));
        const ChatOptions options{QStringLiteral("Tell stories.\nShort ones."),
                                  QJsonObject{{"temperature", 0.8}, {"seed", 42}}, QStringLiteral("/m/relu.gguf")};
        STORE_TAKE(story, store->createChat(QStringLiteral("A story"), options));
        STORE_TAKE(ask, store->addMessage(story, std::nullopt, Role::User, QStringLiteral("Tell me about %1 foxes")));
        STORE_TAKE(first, store->beginAssistant(story, ask));
        STORE_CHECK(store->finishAssistant(first, QStringLiteral("Once there was a **fox**."),
                                           GenerationStats{95, 7, 120.5, 12, 33.3, QStringLiteral("eos")}));
        STORE_TAKE(second, store->beginAssistant(story, ask));
        STORE_CHECK(store->finishAssistant(second, QStringLiteral("Foxes nap."),
                                           GenerationStats{90, 7, 118.0, 4, 30.0, QStringLiteral("stopped")}));
        STORE_TAKE(more, store->addMessage(story, second, Role::User, QStringLiteral("More!")));
        STORE_TAKE(cut, store->beginAssistant(story, more));
        STORE_CHECK(store->updateGenerating(cut, QStringLiteral("They dream of")));
        STORE_CHECK(store->setPinned(story, true));
        STORE_TAKE(other, store->createChat(QStringLiteral("Empty chat")));
        Q_UNUSED(other);
        m_story = story;
    }
    // Reopening marks the cut answer interrupted, as after a crash.
    STORE_TAKE(store, ChatStore::open(m_source));
}

void TestStoreTransfer::jsonRoundTripLosesNothing() {
    STORE_TAKE(source, ChatStore::open(m_source));
    STORE_TAKE(exported, source->exportChats(ExportFormat::Json));

    const QString target = m_dir.filePath(QStringLiteral("target.db"));
    STORE_TAKE(store, ChatStore::open(target));
    STORE_TAKE(imported, store->importJson(exported));
    QCOMPARE(imported.size(), 2);
    STORE_TAKE(reexported, store->exportChats(ExportFormat::Json));

    const QList<ChatRecord> before = chatsFromJson(exported);
    QCOMPARE(before.size(), 2);
    QCOMPARE(before[0].messages.size(), 5);
    QCOMPARE(withoutIds(chatsFromJson(reexported)), withoutIds(before));

    // What the user sees is the same too.
    STORE_TAKE(sourceBranch, source->activePath(m_story));
    STORE_TAKE(importedBranch, store->activePath(imported[0]));
    QCOMPARE(importedBranch.size(), sourceBranch.size());
    for (qsizetype i = 0; i < sourceBranch.size(); ++i) {
        QCOMPARE(importedBranch[i].content, sourceBranch[i].content);
        QCOMPARE(importedBranch[i].status, sourceBranch[i].status);
        QCOMPARE(importedBranch[i].stats, sourceBranch[i].stats);
    }
    QCOMPARE(importedBranch.last().status, MessageStatus::Interrupted);
    STORE_TAKE(found, store->search(QStringLiteral("nap")));
    QCOMPARE(found.size(), 1);
    QCOMPARE(found[0].chatId, imported[0]);

    // Exporting one chat exports just that one.
    STORE_TAKE(single, source->exportChats(ExportFormat::Json, m_story));
    QCOMPARE(chatsFromJson(single).size(), 1);
}

void TestStoreTransfer::markdownShowsTheActiveBranch() {
    STORE_TAKE(store, ChatStore::open(m_source));
    STORE_TAKE(bytes, store->exportChats(ExportFormat::Markdown, m_story));
    const QString markdown = QString::fromUtf8(bytes);
    for (const char* expected : {"# A story\n", "> Tell stories.\n> Short ones.", "- Model: `/m/relu.gguf`",
                                 "## User\n\nTell me about %1 foxes", "## Assistant\n\nFoxes nap.",
                                 "*4 tokens · 30.0 tok/s · first token 90 ms · stop: stopped*", "## User\n\nMore!",
                                 "They dream of\n\n*(interrupted)*"})
        QVERIFY2(markdown.contains(QString::fromUtf8(expected)), expected);
    // The first answer is a sibling off the branch on screen.
    QVERIFY(!markdown.contains(QLatin1String("Once there was")));

    STORE_TAKE(all, store->exportChats(ExportFormat::Markdown));
    const QString both = QString::fromUtf8(all);
    QVERIFY(both.contains(QLatin1String("# A story")));
    QVERIFY(both.contains(QLatin1String("\n---\n\n# Empty chat")));
}

void TestStoreTransfer::malformedImportWritesNothing_data() {
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("error");

    QTest::newRow("not JSON") << QByteArray("{\"format\": ") << "not valid JSON";
    QTest::newRow("array at the top") << QByteArray("[]") << "the file: expected a JSON object, found an array";
    QJsonObject otherFormat = validExport();
    otherFormat.insert("format", "gpt4all");
    QTest::newRow("other format") << QJsonDocument(otherFormat).toJson()
                                  << R"(format: expected "ember-chats", found "gpt4all")";
    QJsonObject newer = validExport();
    newer.insert("version", 2);
    QTest::newRow("newer version") << QJsonDocument(newer).toJson() << "version: expected a version from 1 to 1";
    QTest::newRow("missing title") << brokenExport([](QJsonObject& chat) { chat.remove("title"); })
                                   << "chats[1].title: expected a string, found nothing";
    QTest::newRow("unknown role")
        << brokenExport([](QJsonObject& chat) { editMessage(chat, 1, "role", "bot"); })
        << R"(chats[1].messages[1].role: expected "system", "user" or "assistant", found "bot")";
    QTest::newRow("parent after child") << brokenExport([](QJsonObject& chat) { editMessage(chat, 0, "parent", 2); })
                                        << "chats[1].messages[0].parent: expected null or the id of an earlier message";
    QTest::newRow("duplicate id") << brokenExport([](QJsonObject& chat) { editMessage(chat, 1, "id", 1); })
                                  << "chats[1].messages[1].id: expected a positive integer not used before";
    QTest::newRow("bad time") << brokenExport([](QJsonObject& chat) { editMessage(chat, 0, "created", "yesterday"); })
                              << R"(chats[1].messages[0].created: expected an ISO 8601 time, found "yesterday")";
    QTest::newRow("negative count") << brokenExport([](QJsonObject& chat) {
        editMessage(chat, 1, "stats", QJsonObject{{"genTokens", -3}});
    }) << "chats[1].messages[1].stats.genTokens: expected an integer ≥ 0, found -3";
    QTest::newRow("fractional id") << brokenExport([](QJsonObject& chat) { editMessage(chat, 0, "id", 1.5); })
                                   << "chats[1].messages[0].id: expected an integer ≥ 0, found 1.5";
    QTest::newRow("settings not an object") << brokenExport([](QJsonObject& chat) { chat.insert("settings", "hot"); })
                                            << R"(chats[1].settings: expected a JSON object, found "hot")";
    QTest::newRow("active leaf elsewhere") << brokenExport([](QJsonObject& chat) { chat.insert("activeLeaf", 9); })
                                           << "chats[1].activeLeaf: expected null or the id of a message in this chat";
}

void TestStoreTransfer::malformedImportWritesNothing() {
    QFETCH(QByteArray, json);
    QFETCH(QString, error);
    const QString path = m_dir.filePath(QStringLiteral("malformed.db"));
    STORE_TAKE(store, ChatStore::open(path));
    if (rowCount(path, "SELECT count(*) FROM chats") == 0) {
        STORE_TAKE(existing, store->createChat(QStringLiteral("already here")));
        STORE_CHECK(store->addMessage(existing, std::nullopt, Role::User, QStringLiteral("keep me")));
    }
    STORE_TAKE(before, store->exportChats(ExportFormat::Json));

    const auto imported = store->importJson(json);
    QVERIFY(!imported.ok());
    QVERIFY2(imported.error().startsWith(path + QLatin1String(": import chats: ")), qPrintable(imported.error()));
    QVERIFY2(imported.error().contains(error), qPrintable(imported.error()));

    STORE_TAKE(after, store->exportChats(ExportFormat::Json));
    QCOMPARE(after, before);
    QCOMPARE(rowCount(path, "SELECT count(*) FROM chats"), 1);
    QCOMPARE(rowCount(path, "SELECT count(*) FROM messages"), 1);
}

QTEST_GUILESS_MAIN(TestStoreTransfer)
#include "tst_store_transfer.moc"

// The history around the open chat, in the real app on the offscreen platform: the conversation
// list fills from sending, open/rename/pin/delete/undo reach the store, regenerated answers are
// switchable siblings, and Ctrl+K search opens the chat of a hit. Any QML warning fails it.
#include <QAbstractItemModelTester>
#include <QPointer>
#include <QQuickItem>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include <memory>

#if defined(Q_OS_LINUX)
#include <unistd.h>
#endif

#include "app/app_shell.h"
#include "ember/model.h"
#include "gui_test_support.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

using ember::app::ChatController;

class TestChatHistory : public QObject {
    Q_OBJECT

    // Sends `text` in a new chat and waits for the (short) answer; returns the chat's id.
    qint64 chat_about(const QString& text) {
        auto& chat = shell_->chat();
        chat.newChat();
        chat.send(text);
        if (!QTest::qWaitFor([&] { return !chat.generating(); }, 30000)) return 0;
        return chat.chat_id();
    }

    std::unique_ptr<ember::store::ChatStore> reader() {
        auto db = ember::store::ChatStore::open(ember::app::AppShell::database_path(dir_.path() + "/data"),
                                                ember::store::ChatStore::OpenMode::Worker);
        return db.ok() ? std::move(db.value()) : nullptr;
    }

    ember::app::HistoryController& history() { return shell_->history(); }

    QQuickItem* item(const char* name) {
        auto* window = qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first());
        return window->findChild<QQuickItem*>(QLatin1String(name));
    }

    QTemporaryDir dir_;
    std::unique_ptr<ember::app::AppShell> shell_;
    std::unique_ptr<QAbstractItemModelTester> testers_[3];
    std::unique_ptr<QSignalSpy> resets_[2];
    qint64 alpha_ = 0, bravo_ = 0;

private slots:
    void initTestCase() {
        gui_test::install_warning_recorder();
        ember::app::AppOptions o;
        o.data_dir = dir_.path() + "/data";
        o.model_path = gui_test::copy_demo_model(dir_.path());
        shell_ = std::make_unique<ember::app::AppShell>(o);
        QVERIFY(shell_->start());
        auto& chat = shell_->chat();
        testers_[0] = std::make_unique<QAbstractItemModelTester>(history().conversations());
        testers_[1] = std::make_unique<QAbstractItemModelTester>(chat.messages());
        testers_[2] = std::make_unique<QAbstractItemModelTester>(history().search_hits());
        resets_[0] = std::make_unique<QSignalSpy>(history().conversations(), &QAbstractItemModel::modelReset);
        resets_[1] = std::make_unique<QSignalSpy>(chat.messages(), &QAbstractItemModel::modelReset);
        QTRY_COMPARE_WITH_TIMEOUT(shell_->engine().status(), ember::app::EngineController::Status::Ready, 30000);
        QVERIFY(QTest::qWaitForWindowExposed(qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first())));
        chat.set_temperature(0.0);
        chat.set_max_tokens(4);
    }

    void sending_fills_the_conversation_list() {
        auto* conversations = history().conversations();
        alpha_ = chat_about(QStringLiteral("Alpha one"));
        QVERIFY(alpha_ != 0);
        QCOMPARE(conversations->rowCount(), 1);
        QCOMPARE(conversations->rows()[0].title, QStringLiteral("Alpha one"));
        QCOMPARE(conversations->rows()[0].section, QStringLiteral("Today"));
        bravo_ = chat_about(QStringLiteral("Bravo two"));
        QVERIFY(bravo_ != 0 && bravo_ != alpha_);
        // Newest first, in the sidebar too.
        QCOMPARE(conversations->rowCount(), 2);
        QCOMPARE(conversations->rows()[0].id, bravo_);
        QCOMPARE(item("conversationList")->property("count").toInt(), 2);
    }

    // Sampling settings and the system prompt belong to a chat: changed in one, kept there,
    // not carried into another chat that has its own; Ctrl+, opens them in the window (and F1
    // the list of shortcuts).
    void system_prompt_default_per_model() {
        auto& chat = shell_->chat();
        chat.newChat();
        QCOMPARE(chat.system_prompt(), QString());
        QVERIFY(!chat.system_prompt_is_default());
        chat.set_system_prompt(QStringLiteral("Quote Genesis."));
        chat.makeSystemPromptDefault();
        QVERIFY(chat.system_prompt_is_default());
        QCOMPARE(shell_->settings().system_prompt_for(shell_->engine().model_path()), QStringLiteral("Quote Genesis."));
        chat.set_system_prompt(QStringLiteral("Something else."));
        QVERIFY(!chat.system_prompt_is_default());
        chat.newChat();  // new chats start with the model's default
        QCOMPARE(chat.system_prompt(), QStringLiteral("Quote Genesis."));
        chat.set_system_prompt({});
        chat.makeSystemPromptDefault();  // an empty default removes it
        chat.newChat();
        QCOMPARE(chat.system_prompt(), QString());
        QCOMPARE(shell_->settings().system_prompt_for(shell_->engine().model_path()), QString());
    }

    void settings_are_saved_per_chat() {
        auto& chat = shell_->chat();
        history().openChat(alpha_);
        chat.set_temperature(1.3);
        chat.set_top_k(7);
        chat.set_seed(42);
        chat.set_system_prompt(QStringLiteral("Answer in verse."));
        history().openChat(bravo_);
        QCOMPARE(chat.temperature(), 0.0);
        QCOMPARE(chat.top_k(), 40);
        QCOMPARE(chat.seed(), -1.0);
        QCOMPARE(chat.system_prompt(), QString());
        history().openChat(alpha_);
        QCOMPARE(chat.temperature(), 1.3);
        QCOMPARE(chat.top_k(), 7);
        QCOMPARE(chat.seed(), 42.0);
        QCOMPARE(chat.max_tokens(), 4);
        QCOMPARE(chat.system_prompt(), QStringLiteral("Answer in verse."));
        auto db = reader();
        QVERIFY(db);
        const QJsonObject stored = db->chat(alpha_).value().options.settings;
        QCOMPARE(stored.value(QStringLiteral("temperature")).toDouble(), 1.3);
        QCOMPARE(stored.value(QStringLiteral("seed")).toDouble(), 42.0);
        chat.set_temperature(2.5);  // out of range: clamped
        QCOMPARE(chat.temperature(), 2.0);

        auto* window = qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first());
        QObject* dialog = window->findChild<QObject*>(QStringLiteral("chatSettings"));
        QVERIFY(dialog);
        QVERIFY(!dialog->property("visible").toBool());
        QTest::keyClick(window, Qt::Key_Comma, Qt::ControlModifier);
        QTRY_VERIFY(dialog->property("visible").toBool());
        // The context length shows what its KV cache costs, for the loaded model.
        chat.set_context_length(4096);
        QObject* cost = window->findChild<QObject*>(QStringLiteral("contextCost"));
        QVERIFY(cost);
        const double kv = shell_->engine().kv_bytes_per_token();
        QVERIFY(kv > 0);
        const QString expected = shell_->hub().formatBytes(4096 * kv);
        QTRY_VERIFY2(cost->property("text").toString().contains(expected), qPrintable(cost->property("text").toString()));
        chat.set_context_length(2048);
        // The demo model has no chat template: plain completion, until ChatML is chosen for it,
        // and the preview shows what the model would read either way.
        QCOMPARE(chat.prompt_format(), QStringLiteral("completion"));
        QVERIFY(!chat.prompt_format_chosen());
        QObject* preview = window->findChild<QObject*>(QStringLiteral("promptPreview"));
        QVERIFY(preview);
        QTRY_VERIFY(preview->property("text").toString().startsWith(QStringLiteral("Answer in verse.")));
        chat.set_prompt_format(QStringLiteral("chatml"));
        QVERIFY(chat.prompt_format_chosen());
        QTRY_VERIFY2(preview->property("text").toString().startsWith(
                         QStringLiteral("<|im_start|>system\nAnswer in verse.<|im_end|>\n<|im_start|>user\n")),
                     qPrintable(preview->property("text").toString()));
        QVERIFY(preview->property("text").toString().endsWith(QStringLiteral("<|im_start|>assistant\n")));
        chat.set_prompt_format(QString());
        QCOMPARE(chat.prompt_format(), QStringLiteral("completion"));
        QVERIFY(QMetaObject::invokeMethod(dialog, "close"));
        QTRY_VERIFY(!dialog->property("visible").toBool());
        QObject* sheet = window->findChild<QObject*>(QStringLiteral("shortcutSheet"));
        QVERIFY(sheet);
        QTest::keyClick(window, Qt::Key_F1);
        QTRY_VERIFY(sheet->property("visible").toBool());
        QVERIFY(QMetaObject::invokeMethod(sheet, "close"));
        QTRY_VERIFY(!sheet->property("visible").toBool());

        // Back to the settings and the open chat the later tests expect.
        chat.set_temperature(0.0);
        chat.set_top_k(40);
        chat.set_seed(-1);
        chat.set_system_prompt(QString());
        history().openChat(bravo_);
    }

    void open_rename_pin_delete_and_undo() {
        auto& chat = shell_->chat();
        auto* conversations = history().conversations();
        QSignalSpy chat_id(&chat, &ChatController::chatIdChanged);
        history().openChat(alpha_);
        QCOMPARE(chat.chat_id(), alpha_);
        QCOMPARE(chat_id.count(), 1);
        QCOMPARE(chat.messages()->messages()[0].content, QStringLiteral("Alpha one"));

        history().renameChat(alpha_, QStringLiteral("  Renamed\n chat "));
        QCOMPARE(conversations->rows()[1].title, QStringLiteral("Renamed chat"));

        QSignalSpy moved(conversations, &QAbstractItemModel::rowsMoved);
        history().togglePin(alpha_);
        QCOMPARE(moved.count(), 1);
        QCOMPARE(conversations->rows()[0].id, alpha_);
        QCOMPARE(conversations->rows()[0].section, QStringLiteral("Pinned"));
        auto db = reader();
        QVERIFY(db);
        auto stored = db->chat(alpha_);
        QVERIFY(stored.ok());
        QCOMPARE(stored.value().title, QStringLiteral("Renamed chat"));
        QVERIFY(stored.value().pinned);

        QSignalSpy deleted(&history(), &ember::app::HistoryController::chatDeleted);
        history().deleteChat(alpha_);
        QCOMPARE(deleted.count(), 1);
        QCOMPARE(deleted[0][0].toString(), QStringLiteral("Renamed chat"));
        QCOMPARE(conversations->rowCount(), 1);
        QCOMPARE(chat.chat_id(), qint64(0));  // it was open
        QVERIFY(item("undoBar")->isVisible());
        QCOMPARE(db->listChats().value().size(), 1);

        history().undoDelete();
        QCOMPARE(conversations->rowCount(), 2);
        QCOMPARE(conversations->rows()[0].id, alpha_);
        QCOMPARE(chat.chat_id(), alpha_);
        QCOMPARE(db->listChats().value().size(), 2);
        QVERIFY2(chat.history_error().isEmpty(), qPrintable(chat.history_error()));
    }

    void regenerated_answers_are_switchable_siblings() {
        auto& chat = shell_->chat();
        const auto& rows = chat.messages()->messages();
        QVERIFY(chat_about(QStringLiteral("Gamma three")) != 0);
        const QString first = rows[1].content;
        QCOMPARE(rows[1].sibling_count, 1);
        chat.set_max_tokens(2);
        chat.regenerate();
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        chat.set_max_tokens(4);
        const QString second = rows[1].content;
        QVERIFY2(first != second, qPrintable(first + " | " + second));
        QCOMPARE(rows[1].sibling_count, 2);
        QCOMPARE(rows[1].sibling_index, 1);

        chat.showSibling(1, -1);
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[1].content, first);
        QCOMPARE(rows[1].sibling_index, 0);
        chat.showSibling(1, -1);  // already the first: nothing changes
        QCOMPARE(rows[1].content, first);
        auto db = reader();
        QVERIFY(db);
        QCOMPARE(db->activePath(chat.chat_id()).value().back().content, first);
        chat.showSibling(1, 1);
        QCOMPARE(rows[1].content, second);
        QCOMPARE(rows[0].content, QStringLiteral("Gamma three"));
    }

    // Edits are siblings too: an edited answer replaces what is shown, an edited question gets
    // a new answer, and "previous version" goes back to the original with its own answer.
    void edits_become_siblings() {
        auto& chat = shell_->chat();
        const auto& rows = chat.messages()->messages();
        QVERIFY(chat_about(QStringLiteral("Delta four")) != 0);
        QVERIFY(!rows[1].content.isEmpty());

        chat.editMessage(1, QStringLiteral("A better answer."));
        QVERIFY(!chat.generating());
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[1].content, QStringLiteral("A better answer."));
        QCOMPARE(rows[1].sibling_count, 2);
        QCOMPARE(rows[1].sibling_index, 1);

        chat.editMessage(0, QStringLiteral("Delta five"));
        QVERIFY(chat.generating());
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[0].content, QStringLiteral("Delta five"));
        QCOMPARE(rows[0].sibling_count, 2);
        QVERIFY(!rows[1].content.isEmpty());
        QCOMPARE(rows[1].sibling_count, 1);
        auto db = reader();
        QVERIFY(db);
        const auto path = db->activePath(chat.chat_id()).value();
        QCOMPARE(path.size(), 2);
        QCOMPARE(path[0].content, QStringLiteral("Delta five"));
        QCOMPARE(path[1].content, rows[1].content);

        chat.showSibling(0, -1);
        QCOMPARE(rows[0].content, QStringLiteral("Delta four"));
        QCOMPARE(rows[1].content, QStringLiteral("A better answer."));

        // In the window: Edit opens the editor on the message's text, Cancel closes it unchanged.
        auto* window = qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first());
        QQuickItem* question = nullptr;
        QTRY_VERIFY((question = gui_test::find_item(window->contentItem(), QStringLiteral("message0"))) &&
                    question->property("content").toString() == QStringLiteral("Delta four"));
        QQuickItem* edit = gui_test::find_item(question, QStringLiteral("editButton"));
        QVERIFY(edit);
        QVERIFY(QMetaObject::invokeMethod(edit, "clicked"));
        QPointer<QQuickItem> editor;
        QTRY_VERIFY((editor = gui_test::find_item(question, QStringLiteral("messageEditor"))) && editor->isVisible());
        QCOMPARE(editor->property("text").toString(), QStringLiteral("Delta four"));
        QVERIFY(QMetaObject::invokeMethod(gui_test::find_item(question, QStringLiteral("cancelEditButton")), "clicked"));
        QTRY_VERIFY(!editor || !editor->isVisible());
        QCOMPARE(rows[0].content, QStringLiteral("Delta four"));

        // Save on the answer: the text typed replaces it, as a new sibling.
        QQuickItem* answer = gui_test::find_item(window->contentItem(), QStringLiteral("message1"));
        QVERIFY(answer);
        QVERIFY(QMetaObject::invokeMethod(gui_test::find_item(answer, QStringLiteral("editButton")), "clicked"));
        QTRY_VERIFY((editor = gui_test::find_item(answer, QStringLiteral("messageEditor"))));
        editor->setProperty("text", QStringLiteral("Edited in the window."));
        QVERIFY(QMetaObject::invokeMethod(gui_test::find_item(answer, QStringLiteral("saveEditButton")), "clicked"));
        QTRY_COMPARE(rows[1].content, QStringLiteral("Edited in the window."));
        QCOMPARE(rows[1].sibling_count, 3);
    }

    // A full context stops the answer and asks; leaving out the oldest turn answers again
    // without it, and the turn stays in the history.
    void full_context_lets_the_user_choose() {
        // Only a guard against a hang: these answers fill a 2048-token context, which takes
        // ~35 s in the sanitizer build.
        constexpr int kLongAnswerMs = 180000;
        auto& chat = shell_->chat();
        const auto& rows = chat.messages()->messages();
        const QString first = QStringLiteral("And the LORD spake unto Moses, saying, ").repeated(120);   // ~1080 tokens
        const QString second = QStringLiteral("And God said unto Noah, behold, ").repeated(100);        // ~800 tokens
        auto* window = qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first());
        QQuickItem* list = gui_test::find_item(window->contentItem(), QStringLiteral("messageList"));
        QVERIFY(list);
        // The list follows a long answer to its end. A list re-positioned from inside its own
        // layout pass re-creates its rows forever: this test then hangs.
        const auto follow_answer = [&] {
            QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), kLongAnswerMs);
            const bool at_end = QTest::qWaitFor([&] { return list->property("atYEnd").toBool(); });
            QVERIFY2(at_end, qPrintable(QStringLiteral("contentY %1 + height %2 < originY %3 + contentHeight %4")
                                            .arg(list->property("contentY").toReal()).arg(list->height())
                                            .arg(list->property("originY").toReal())
                                            .arg(list->property("contentHeight").toReal())));
            QTRY_VERIFY(list->property("contentHeight").toReal() > list->height());
        };
        chat.newChat();
        chat.send(first);
        follow_answer();
        if (QTest::currentTestFailed()) return;
        QVERIFY(!chat.context_full());
        chat.set_max_tokens(1000);
        chat.send(second);
        follow_answer();
        if (QTest::currentTestFailed()) return;
        QVERIFY2(chat.context_full(), qPrintable(rows.back().stats));
        QVERIFY(rows.back().stats.contains(QStringLiteral("context full")));
        QQuickItem* bar = gui_test::find_item(window->contentItem(), QStringLiteral("contextFullBar"));
        QVERIFY(bar);
        QTRY_VERIFY(bar->isVisible());

        chat.set_max_tokens(4);
        chat.dropOldestTurn();
        QCOMPARE(chat.context_start(), 2);
        QVERIFY(!chat.renderedPrompt().contains(QStringLiteral("Moses")));
        QVERIFY(chat.renderedPrompt().contains(QStringLiteral("Noah")));
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), kLongAnswerMs);
        QVERIFY(!chat.context_full());
        QTRY_VERIFY(!bar->isVisible());
        QCOMPARE(rows.size(), 4);
        QCOMPARE(rows[0].content, first);  // still in the history
        // The choice is the chat's: reopened, the dropped turn stays out of the model's context.
        const qint64 id = chat.chat_id();
        chat.newChat();
        QCOMPARE(chat.context_start(), 0);
        history().openChat(id);
        QCOMPARE(chat.context_start(), 2);
        QVERIFY(!chat.renderedPrompt().contains(QStringLiteral("Moses")));
        chat.newChat();
    }

    // Scrolled up to read, the user stays there; the next question brings the end back.
    void scrolling_up_stops_following() {
        auto& chat = shell_->chat();
        auto* window = qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first());
        QQuickItem* list = item("messageList");
        QVERIFY(list);
        chat.newChat();
        chat.send(QStringLiteral("And the LORD spake unto Moses, saying, ").repeated(120));
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 60000);
        QTRY_VERIFY(list->property("contentHeight").toReal() > list->height());
        QTRY_VERIFY(list->property("atYEnd").toBool());
        // The list lays rows out in steps, from estimated heights: wait until it holds still.
        const auto settled = [&] {
            for (int still = 0, round = 0; round < 100; ++round) {
                const qreal y = list->property("contentY").toReal(), h = list->property("contentHeight").toReal();
                QTest::qWait(50);
                still = y == list->property("contentY").toReal() && h == list->property("contentHeight").toReal() ? still + 1 : 0;
                if (still == 6) return true;
            }
            return false;
        };
        QVERIFY(settled());

        const QPointF centre = list->mapToScene(QPointF(list->width() / 2, list->height() / 2));
        QWheelEvent up(centre, window->mapToGlobal(centre), QPoint(0, 0), QPoint(0, 3 * 120), Qt::NoButton,
                       Qt::NoModifier, Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(window, &up);
        QTRY_VERIFY(!list->property("following").toBool());
        QVERIFY(settled());
        // Where the question being read sits in the view (contentY itself may shift with the
        // list's origin while nothing moves on screen).
        const auto question_y = [&] {
            QQuickItem* question = gui_test::find_item(list, QStringLiteral("message0"));
            return question ? question->mapToItem(list, QPointF(0, 0)).y() : qQNaN();
        };
        const qreal reading = question_y();
        QVERIFY(!qIsNaN(reading));
        chat.set_max_tokens(8);
        chat.regenerate();  // the answer below changes; the text being read does not move
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 60000);
        QTest::qWait(100);
        QCOMPARE(question_y(), reading);

        chat.send(QStringLiteral("And God said unto Noah, behold, ").repeated(40));
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 60000);
        QTRY_VERIFY(list->property("atYEnd").toBool());
        chat.set_max_tokens(4);
        chat.newChat();
    }

    // Stopped while the engine still reads the question, the answer is empty but what was read
    // stays in the cache: asking again evaluates the rest, not the whole conversation. How long
    // reading takes depends on the build, so Stop comes sooner when the whole question was read
    // first, and later when it came before the first batch.
    void stopping_before_the_first_token_keeps_what_was_read() {
        auto& chat = shell_->chat();
        const auto& rows = chat.messages()->messages();
        // ~1600 tokens, a new one each attempt: the same question would find the last attempt's
        // tokens cached.
        const auto question = [](int attempt) {
            return QStringLiteral("%1. ").arg(attempt) + QStringLiteral("And the LORD spake unto Moses, saying, ").repeated(180);
        };
        QString seen;
        int wait_ms = 150;
        for (int attempt = 0; attempt < 6; ++attempt) {
            chat.newChat();
            chat.send(question(attempt));
            QTest::qWait(wait_ms);
            chat.stop();
            QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 60000);
            if (!rows.back().content.isEmpty()) {
                seen += QStringLiteral("Stop after %1 ms: the answer had begun; ").arg(wait_ms);
                wait_ms /= 2;
                continue;
            }
            chat.regenerate();
            // Reading the rest of ~1600 tokens takes over a minute under ASan on a busy machine.
            QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 180000);
            const QString stats = rows.back().stats;
            const QRegularExpressionMatch evaluated = QRegularExpression(QStringLiteral("prompt (\\d+) tokens")).match(stats);
            QVERIFY2(evaluated.hasMatch(), qPrintable(stats));
            const int read_again = evaluated.captured(1).toInt();
            const int in_context = chat.context_tokens();  // the question and at most 4 answer tokens
            seen += QStringLiteral("Stop after %1 ms: %2 of %3 tokens read again; ").arg(wait_ms).arg(read_again).arg(in_context);
            if (read_again + 4 < in_context) {
                chat.newChat();
                return;
            }
            wait_ms *= 2;
        }
        QFAIL(qPrintable(seen));
    }

    // A question longer than the whole context fails in the engine (ErrorCode::ContextOverflow);
    // the chat offers the same choice as when an answer fills the context.
    void question_over_the_context_fills_it() {
        auto& chat = shell_->chat();
        const int length = chat.context_length();
        chat.newChat();
        chat.set_context_length(256);
        chat.send(QStringLiteral("And God said unto Noah, behold, ").repeated(60));  // ~480 tokens
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 60000);
        const auto& rows = chat.messages()->messages();
        QVERIFY2(rows.back().stats.startsWith(QStringLiteral("error: ")), qPrintable(rows.back().stats));
        QVERIFY(chat.context_full());
        chat.set_context_length(length);
        chat.newChat();
    }

    void search_opens_the_chat_of_a_hit() {
        const QString marked = QStringLiteral("a<i>&") + QChar(ember::store::kMatchStart) + "x" +
                               QChar(ember::store::kMatchEnd);
        QCOMPARE(ember::app::snippet_html(marked), QStringLiteral("a&lt;i&gt;&amp;<b>x</b>"));

        auto& chat = shell_->chat();
        history().search(QStringLiteral("bravo"));
        QVERIFY(history().search_hits()->rowCount() >= 1);
        const QModelIndex hit = history().search_hits()->index(0);
        QCOMPARE(hit.data(ember::app::SearchHitModel::ChatTitleRole).toString(), QStringLiteral("Bravo two"));
        QVERIFY(hit.data(ember::app::SearchHitModel::SnippetRole).toString().contains(QStringLiteral("<b>Bravo</b>")));

        // Through the window: Ctrl+K, type, Enter opens the first hit's chat.
        auto* window = qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first());
        QTest::keyClick(window, Qt::Key_K, Qt::ControlModifier);
        auto* popup_field = item("searchField");
        QVERIFY(popup_field);
        QTRY_VERIFY(popup_field->hasActiveFocus());
        for (char c : QByteArrayLiteral("alpha")) QTest::keyClick(window, c);
        QTRY_VERIFY(history().search_hits()->rowCount() >= 1);
        QTest::keyClick(window, Qt::Key_Return);
        QCOMPARE(chat.chat_id(), alpha_);
        QCOMPARE(chat.messages()->messages()[0].content, QStringLiteral("Alpha one"));
        QTRY_VERIFY(!popup_field->isVisible());
        // The matching message is marked (and scrolled to); opening another chat clears that.
        QCOMPARE(chat.found_row(), 0);
        QQuickItem* found = nullptr;
        QTRY_VERIFY((found = gui_test::find_item(window->contentItem(), QStringLiteral("message0"))) &&
                    found->property("content").toString() == QStringLiteral("Alpha one"));
        QVERIFY(found->property("found").toBool());
        QVERIFY(!gui_test::find_item(window->contentItem(), QStringLiteral("message1"))->property("found").toBool());
        // A new answer clears the mark, so the view follows the answer again.
        chat.regenerate();
        QCOMPARE(chat.found_row(), -1);
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        history().openChat(bravo_);
        QCOMPARE(chat.found_row(), -1);
    }

    // Export one chat or all of them (Markdown to read, JSON to import back); importing the JSON
    // adds the chats again and opens the first; a broken file or a bad path changes nothing and
    // says why.
    void export_and_import_chats() {
        auto& chat = shell_->chat();
        QVERIFY(item("exportButton") && item("importButton"));
        history().openChat(bravo_);
        QVERIFY(history().exportChats(dir_.path() + "/bravo.md", false));
        QVERIFY2(history().transfer_message().startsWith(QStringLiteral("Exported the chat as Markdown to ")),
                 qPrintable(history().transfer_message()));
        QFile md(dir_.path() + "/bravo.md");
        QVERIFY(md.open(QIODevice::ReadOnly));
        const QString markdown = QString::fromUtf8(md.readAll());
        QVERIFY2(markdown.startsWith(QStringLiteral("# Bravo two")), qPrintable(markdown.left(200)));
        QVERIFY(!markdown.contains(QStringLiteral("Alpha one")));

        const int before = history().conversations()->rowCount();
        QVERIFY(before >= 2);
        const QString json = dir_.path() + "/all.json";
        QVERIFY(history().exportChats(json, true));
        QCOMPARE(history().transfer_message(), QStringLiteral("Exported %1 chats as JSON to %2").arg(before).arg(json));

        QVERIFY(history().importChats(json));
        QCOMPARE(history().transfer_message(), QStringLiteral("Imported %1 chats from %2").arg(before).arg(json));
        QCOMPARE(history().conversations()->rowCount(), 2 * before);
        const qint64 opened = qint64(chat.chat_id_number());
        QVERIFY(opened != alpha_ && opened != bravo_);
        QVERIFY(!chat.messages()->messages().isEmpty());
        QTRY_COMPARE(item("transferMessage")->property("text").toString(), history().transfer_message());

        // A cut-off export: nothing imported, the reason names the file.
        QFile whole(json);
        QVERIFY(whole.open(QIODevice::ReadOnly));
        const QByteArray bytes = whole.readAll();
        QFile cut(dir_.path() + "/cut.json");
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(bytes.left(bytes.size() / 2));
        cut.close();
        QVERIFY(!history().importChats(cut.fileName()));
        QVERIFY2(history().transfer_message().startsWith(QStringLiteral("Import failed: ") + cut.fileName()),
                 qPrintable(history().transfer_message()));
        QCOMPARE(history().conversations()->rowCount(), 2 * before);
        QVERIFY(!history().exportChats(dir_.path() + "/no/such/folder/x.md", true));
        QVERIFY2(history().transfer_message().contains(dir_.path() + "/no/such/folder/x.md"), qPrintable(history().transfer_message()));
        QVERIFY(!QFile::exists(dir_.path() + "/no/such/folder/x.md"));
    }

    // In a chat format "<s>" and "</s>" are markup the model reads as tokens; typed into a
    // question they are text, and the preview shows them as typed.
    void typed_control_tokens_stay_text() {
        auto& chat = shell_->chat();
        // Ctrl+N starts a new chat, as the New chat button does.
        QVERIFY(chat.chat_id() != 0);
        auto* window = qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first());
        QTest::keyClick(window, Qt::Key_N, Qt::ControlModifier);
        QTRY_COMPARE(chat.chat_id(), qint64(0));
        QCOMPARE(chat.messages()->rowCount(), 0);
        chat.set_prompt_format(QStringLiteral("llama2"));
        chat.set_max_tokens(1);
        const QString question = QStringLiteral("Is </s> the end of <s> text?");
        chat.send(question);
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        const QString text = QStringLiteral("[INST] ") + question + QStringLiteral(" [/INST]");
        QVERIFY2(chat.renderedPrompt().startsWith(text), qPrintable(chat.renderedPrompt()));

        auto model = ember::Model::load(shell_->engine().model_path().toStdString());
        QVERIFY(model.ok());
        const std::vector<int32_t> as_text = (*model)->tokenize(text.toStdString(), true);
        const std::vector<int32_t> as_markup = (*model)->tokenize_markup(text.toStdString(), true);
        QVERIFY(as_markup.size() != as_text.size());  // the pieces would have been tokens
        // The model's context holds the prompt and the one answer token.
        QCOMPARE(shell_->engine().context_used(), int(as_text.size()) + 1);
        chat.set_prompt_format(QString());
        chat.set_max_tokens(4);
    }

#if defined(Q_OS_LINUX)
    // The engine's threads (the worker and the pool it started) run at the GUI thread's priority,
    // not below it: lowered, they lost their cores to the window's drawing and the app generated
    // at a fraction of the engine's speed (BENCHMARKS.md, "The app").
    void engine_threads_run_at_the_guis_priority() {
        const auto nice_of = [](const QString& task) {
            QFile f(QStringLiteral("/proc/self/task/%1/stat").arg(task));
            if (!f.open(QIODevice::ReadOnly)) return -100;
            const QByteArray stat = f.readAll();
            // Fields after the command's ")": state is field 3, nice field 19.
            const QList<QByteArray> fields = stat.mid(stat.lastIndexOf(')') + 2).split(' ');
            return fields.size() > 16 ? fields[16].toInt() : -100;
        };
        const int gui_nice = nice_of(QString::number(::gettid()));
        QVERIFY(gui_nice > -100);
        int engine_threads = 0;
        for (const QString& task : QDir(QStringLiteral("/proc/self/task")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
            QFile comm(QStringLiteral("/proc/self/task/%1/comm").arg(task));
            if (!comm.open(QIODevice::ReadOnly) || comm.readAll().trimmed() != "EngineWorker") continue;
            ++engine_threads;
            QVERIFY2(nice_of(task) <= gui_nice, qPrintable(QStringLiteral("thread %1: nice %2, the GUI's %3")
                                                               .arg(task).arg(nice_of(task)).arg(gui_nice)));
        }
        // The worker, and the pool threads it started when the engine uses more than one.
        QVERIFY(engine_threads >= (QThread::idealThreadCount() > 1 ? 2 : 1));
    }
#endif

    // send() leaves the database writes to the first flush, so the frame that shows the question
    // does not wait for them; the question and its answer's row are stored then, while the answer
    // streams, not when it ends.
    void a_question_is_stored_while_its_answer_streams() {
        auto& chat = shell_->chat();
        chat.newChat();
        chat.set_max_tokens(2000);
        chat.send(QStringLiteral("Charlie three"));
        QVERIFY(chat.generating());
        QVERIFY(QTest::qWaitFor([&] { return chat.chat_id() != 0; }, 5000));
        auto db = reader();
        QVERIFY(db);
        auto path = db->activePath(chat.chat_id());
        const bool streaming = chat.generating();
        chat.stop();
        QVERIFY(QTest::qWaitFor([&] { return !chat.generating(); }, 30000));
        chat.set_max_tokens(4);
        QVERIFY(streaming);
        QVERIFY(path.ok());
        QCOMPARE(path.value().size(), 2);
        QCOMPARE(path.value()[0].content, QStringLiteral("Charlie three"));
        QCOMPARE(path.value()[0].role, ember::store::Role::User);
        QCOMPARE(path.value()[1].role, ember::store::Role::Assistant);
        QCOMPARE(path.value()[1].parentId, std::optional<qint64>(path.value()[0].id));
        QCOMPARE(path.value()[1].status, ember::store::MessageStatus::Generating);
        QCOMPARE(chat.messages()->messages()[1].id, path.value()[1].id);
    }

    void cleanupTestCase() {
        QCOMPARE(resets_[0]->count(), 0);
        QCOMPARE(resets_[1]->count(), 0);
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
        for (auto& t : testers_) t.reset();
        shell_.reset();
    }
};

QTEST_MAIN(TestChatHistory)
#include "tst_chat_history.moc"

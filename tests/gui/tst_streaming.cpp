// How an answer reaches the window while the engine floods it with tokens (the demo model makes
// hundreds a second): the text arrives in batches and the view is updated a bounded number of
// times a second, the streamed text is exactly the engine's answer, the window draws only when
// something changed, and Stop (Esc) ends the answer, its text still the engine's up to there.
#include <QElapsedTimer>
#include <QFileInfo>
#include <QQuickWindow>
#include <QSignalSpy>
#include <QStyleHints>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include <memory>

#include "app/app_shell.h"
#include "app/engine/generation_stats.h"
#include "app/tools/engine_alone.h"
#include "gui_test_support.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

namespace {

const QString kPrompt = QStringLiteral("And God said, Let there be light");
// Under the sanitizers (tests/run-hardening.sh) a token costs some 80 times a Release one: fewer
// there, still hundreds, reach the same code.
const int kMaxTokens = qEnvironmentVariableIsSet("LSAN_OPTIONS") || qEnvironmentVariableIsSet("TSAN_OPTIONS") ? 300 : 1500;
constexpr qint64 kSeed = 77;
// The engine worker's batch interval and ChatController's flush interval; a coarse QTimer may fire
// up to 5 % early.
constexpr double kBatchMs = 50, kFlushMs = 100 * 0.95;

// Waits until the window has drawn nothing for half a second: the first frames after start (the
// tab bar's highlight grows into place) are not an answer's.
bool wait_until_still(QQuickWindow* window) {
    QElapsedTimer still;
    still.start();
    const auto reset = QObject::connect(window, &QQuickWindow::frameSwapped, [&] { still.restart(); });
    const bool settled = QTest::qWaitFor([&] { return still.elapsed() > 500; }, 10000);
    QObject::disconnect(reset);
    return settled;
}

}  // namespace

class TestStreaming : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        gui_test::install_warning_recorder();
        // A steady text cursor: the message box has the keyboard, and its blinking would be
        // frames that are not the answer's.
        QGuiApplication::styleHints()->setCursorFlashTime(0);
        QVERIFY(dir_.isValid());
        model_ = gui_test::copy_demo_model(dir_.path());
        ember::app::AppOptions o;
        o.data_dir = dir_.path() + "/data";
        o.model_path = model_;
        shell_ = std::make_unique<ember::app::AppShell>(o);
        QVERIFY(shell_->start());
        window_ = qobject_cast<QQuickWindow*>(shell_->qml().rootObjects().first());
        QVERIFY(QTest::qWaitForWindowExposed(window_));
        QTRY_COMPARE_WITH_TIMEOUT(shell_->engine().status(), ember::app::EngineController::Status::Ready, 60000);
        auto& chat = shell_->chat();
        // The question as plain text, as the engine alone is given it.
        chat.set_prompt_format(QStringLiteral("completion"));
        chat.set_system_prompt(QString());
        chat.set_max_tokens(kMaxTokens);
        chat.set_seed(double(kSeed));
        // What the engine answers on its own, in the session the app makes for a sparse model
        // without a GPU (AppShell::start's budget).
        ember::app::GenerationSettings settings = chat.settings();
        expected_ = ember::app::probe::engine_alone(model_, QFileInfo(model_).size() * 9 / 10, kPrompt,
                                                    ember::app::sampling_params(settings, 0), kMaxTokens);
        QVERIFY2(expected_.error.isEmpty(), qPrintable(expected_.error));
        QVERIFY(expected_.tokens > 100);
    }

    // Each answer starts from an empty context, as the engine alone's did: a prompt evaluated
    // after a cached prefix may round differently and sample other tokens.
    void init() {
        auto& engine = shell_->engine();
        engine.loadModel(model_, double(QFileInfo(model_).size() * 9 / 10));
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 60000);
        shell_->chat().newChat();
        QVERIFY(wait_until_still(window_));
    }

    void a_flood_of_tokens_reaches_the_view_in_batches() {
        auto& chat = shell_->chat();
        auto& engine = shell_->engine();
        if (engine.device_name() != expected_.device) QSKIP("the app answers on another device than the engine alone");
        QSignalSpy batches(&engine, &ember::app::EngineController::token);
        QSignalSpy finished(&chat, &ember::app::ChatController::answerFinished);
        int updates = 0;
        const auto counter = connect(chat.messages(), &QAbstractItemModel::dataChanged,
                                     [&](const QModelIndex&, const QModelIndex&, const QList<int>& roles) {
                                         if (roles.contains(ember::app::MessageListModel::ContentRole)) ++updates;
                                     });
        int frames = 0;
        const auto frame_counter = connect(window_, &QQuickWindow::frameSwapped, [&] { ++frames; });
        QElapsedTimer clock;
        clock.start();
        chat.send(kPrompt);
        QVERIFY(finished.wait(120000));
        const double elapsed_ms = double(clock.elapsed());
        disconnect(counter);
        disconnect(frame_counter);
        const int tokens = finished.first().first().value<ember::app::GenerationStats>().generated_tokens;
        QCOMPARE(tokens, expected_.tokens);

        // Every piece arrived once, in order: the answer is the engine's, character for character.
        QCOMPARE(chat.messages()->messages().back().content, QString::fromStdString(expected_.text));
        // A signal per batch, not per token; a view update per flush (the first text at once, the
        // last when the answer ends), however fast the tokens came.
        QVERIFY2(batches.count() <= elapsed_ms / kBatchMs + 2,
                 qPrintable(QStringLiteral("%1 batches in %2 ms").arg(batches.count()).arg(elapsed_ms)));
        QVERIFY2(updates <= elapsed_ms / kFlushMs + 3,
                 qPrintable(QStringLiteral("%1 view updates in %2 ms").arg(updates).arg(elapsed_ms)));
        // Nothing animates while the answer streams: the window draws when the text or the split
        // view changed (~10 and 4 times a second; an update may take a second frame that draws
        // nothing, as the list follows the answer), not at 60 Hz or, offscreen, as fast as it can.
        QVERIFY2(frames <= elapsed_ms / 1000 * 45 + 5,
                 qPrintable(QStringLiteral("%1 frames in %2 ms").arg(frames).arg(elapsed_ms)));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    void stop_ends_the_answer_where_it_was() {
        auto& chat = shell_->chat();
        auto& engine = shell_->engine();
        if (engine.device_name() != expected_.device) QSKIP("the app answers on another device than the engine alone");
        QSignalSpy finished(&chat, &ember::app::ChatController::answerFinished);
        // Esc as the window gets the answer's first batch: however late the GUI thread is (the
        // sanitizer runs share two cores with other tests), the engine is still mid-answer then
        // unless it made all its tokens before the window saw one.
        const auto press_stop = connect(&engine, &ember::app::EngineController::token, this,
                                        [this] { QTest::keyClick(window_, Qt::Key_Escape); },
                                        Qt::SingleShotConnection);
        chat.send(kPrompt);
        // Counted, not awaited: an answer may end before a wait would start.
        QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
        disconnect(press_stop);
        const auto stats = finished.first().first().value<ember::app::GenerationStats>();
        QCOMPARE(stats.stop_reason, ember::app::GenerationStats::StopReason::Stopped);
        QVERIFY(stats.generated_tokens < expected_.tokens);
        // The text of the tokens made before Stop, all of it: a prefix of the whole answer.
        const QString shown = chat.messages()->messages().back().content;
        QVERIFY(!shown.isEmpty());
        QVERIFY(QString::fromStdString(expected_.text).startsWith(shown));
        QVERIFY(!chat.generating());
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    void cleanupTestCase() {
        shell_.reset();
        gui_test::g_warnings.clear();
    }

private:
    QTemporaryDir dir_;
    QString model_;
    std::unique_ptr<ember::app::AppShell> shell_;
    QQuickWindow* window_ = nullptr;
    ember::app::probe::EngineRun expected_;
};

QTEST_MAIN(TestStreaming)
#include "tst_streaming.moc"

// The real app, window and all, on the offscreen platform: the demo model loads, a prompt
// streams into the chat, Stop stops it, Regenerate answers again, the split view fills in, and
// the VRAM slider re-plans. Any QML warning fails the test.
#include <QAbstractItemModelTester>
#include <QAccessible>
#include <QClipboard>
#include <QGuiApplication>
#include <QProcess>
#include <QDir>
#include <QFile>
#include <QImageReader>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQmlComponent>
#include <QQmlContext>
#include <QQmlProperty>
#include <QQuickItem>
#include <QQuickWindow>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>
#include <QtTest>

#include <algorithm>
#include <functional>

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app/app_shell.h"
#include "app/hub/model_suggestion.h"
#include "app/store/chat_store.h"
#include "ember/gpu.h"
#include "gui_test_support.h"
#include "unsupported_model.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

namespace {

// What a screen reader announces for a control: its Accessible.name, else (buttons) its text.
QString accessible_name(QQuickItem* item) {
    const QString name = QQmlProperty::read(item, QStringLiteral("Accessible.name"), qmlContext(item)).toString();
    if (!name.isEmpty() || !item->inherits("QQuickAbstractButton")) return name;
    return item->property("text").toString();
}

// Every visible control under `root` that a screen reader could not name. A combo box's or spin
// box's own parts are announced as the box.
// A port nothing listens on now (the kernel's choice for a socket bound to port 0).
int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

void unnamed_controls(QQuickItem* root, QStringList& out) {
    if (!root || !root->isVisible()) return;
    if (root->inherits("QQuickComboBox") || root->inherits("QQuickSpinBox")) {
        if (accessible_name(root).trimmed().isEmpty()) out << QStringLiteral("%1 '%2'").arg(QString::fromLatin1(root->metaObject()->className()), root->objectName());
        return;
    }
    static const char* const kControls[] = {"QQuickAbstractButton", "QQuickSlider", "QQuickTextField", "QQuickTextArea"};
    for (const char* type : kControls)
        if (root->inherits(type) && accessible_name(root).trimmed().isEmpty())
            out << QStringLiteral("%1 '%2' in %3").arg(QString::fromLatin1(root->metaObject()->className()), root->objectName(),
                                                       root->parentItem() ? QString::fromLatin1(root->parentItem()->metaObject()->className()) : QString());
    for (QQuickItem* child : root->childItems()) unnamed_controls(child, out);
}

// WCAG 2's contrast ratio of two opaque colours, 1 to 21.
double contrast(const QColor& a, const QColor& b) {
    const auto luminance = [](const QColor& c) {
        const auto channel = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
    };
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

// `over` with `top` drawn on it at `alpha`.
QColor blend(const QColor& top, const QColor& over, double alpha) {
    return QColor::fromRgbF(float(alpha * top.redF() + (1 - alpha) * over.redF()),
                            float(alpha * top.greenF() + (1 - alpha) * over.greenF()),
                            float(alpha * top.blueF() + (1 - alpha) * over.blueF()));
}

// Starts the app and waits until its window is on screen; null if it did not start.
QQuickWindow* shown_window(ember::app::AppShell& shell) {
    if (!shell.start()) return nullptr;
    auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
    return QTest::qWaitForWindowExposed(window) ? window : nullptr;
}

ember::app::AppOptions options(const QString& data_dir, const QString& model) {
    ember::app::AppOptions o;
    o.data_dir = data_dir;
    o.model_path = model;
    return o;
}

}  // namespace

class TestAppWindow : public QObject {
    Q_OBJECT

private:
    // Loads `model` (n_layer layers) on the sim device (or the GPU) and answers with everything
    // on the device at 64 MiB, then again at part(the bytes used then): some FFN neurons on the
    // device and not all, the same in the device report and the split view, and the same text.
    void slider_moves_the_ffn_and_keeps_the_text(const QString& dir, const QString& model, int n_layer,
                                                 const std::function<double(double)>& part) {
        ember::app::AppShell shell(options(dir + "/data", model));
        QVERIFY(shell.start());
        auto& engine = shell.engine();
        auto& chat = shell.chat();
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
        QVERIFY(!engine.sparse());
        if (!ember::probe_gpus().first_usable()) QCOMPARE(engine.device_name(), QStringLiteral("sim"));
        QTRY_COMPARE(engine.layers()->rowCount(), n_layer);
        // The split view's neurons on the device, summed over its layers.
        const auto hot_in_view = [&] {
            qint64 n = 0;
            for (int r = 0; r < engine.layers()->rowCount(); ++r)
                n += engine.layers()->index(r).data(ember::app::LayerSplitModel::HotRole).toInt();
            return n;
        };

        QSignalSpy device(&engine, &ember::app::EngineController::deviceChanged);
        engine.setBudget(64.0 * 1024 * 1024);
        QTRY_VERIFY_WITH_TIMEOUT(device.count() >= 1, 10000);
        QCOMPARE(engine.hot_neurons(), engine.total_neurons());
        QVERIFY(engine.kv_bytes() > 0);
        chat.set_temperature(0.0);
        chat.set_max_tokens(8);
        chat.send(QStringLiteral("In the beginning"));
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        const QString on_device = chat.messages()->messages().back().content;
        QVERIFY(!on_device.isEmpty());
        QTRY_COMPARE(hot_in_view(), engine.total_neurons());

        const double budget = part(engine.used_bytes());
        device.clear();
        engine.setBudget(budget);
        QTRY_VERIFY_WITH_TIMEOUT(device.count() >= 1, 10000);
        QVERIFY(engine.used_bytes() <= budget);
        QVERIFY(engine.hot_neurons() > 0 && engine.hot_neurons() < engine.total_neurons());
        chat.regenerate();
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        QCOMPARE(chat.messages()->messages().back().content, on_device);
        // The split view shows the re-plan: the device's share of the layers' neurons.
        QTRY_COMPARE(hot_in_view(), engine.hot_neurons());
    }

private slots:
    void initTestCase() { gui_test::install_warning_recorder(); }

    void chat_streams_stops_and_regenerates() {
        QTemporaryDir dir;
        ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
        QVERIFY(shell.start());
        auto& engine = shell.engine();
        auto& chat = shell.chat();
        QAbstractItemModelTester messages_tester(chat.messages());
        QAbstractItemModelTester layers_tester(engine.layers());
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
        QVERIFY(engine.sparse());
        // The first usable GPU holds the hot neurons; without one the sim device previews a GPU
        // and the panel says why no GPU is in use.
        const ember::GpuProbe probe = ember::probe_gpus();
        if (const ember::GpuInfo* gpu = probe.first_usable()) {
            QCOMPARE(engine.device_name(), QString::fromStdString(gpu->name));
        } else {
            QCOMPARE(engine.device_name(), QStringLiteral("sim"));
            QVERIFY2(engine.device_note().startsWith("No GPU in use: " + QString::fromStdString(probe.reason)),
                     qPrintable(engine.device_note()));
        }
        QTRY_COMPARE(engine.layers()->rowCount(), 6);

        auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
        QVERIFY(window);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        auto* list = window->findChild<QQuickItem*>(QStringLiteral("messageList"));
        QVERIFY(list);
        // The window shows the controllers main() made, not copies of its own.
        QTRY_VERIFY(window->title().contains(engine.model_name()));
        auto* bars = window->findChild<QQuickItem*>(QStringLiteral("layerBars"));
        QVERIFY(bars);
        QTRY_COMPARE(bars->property("count").toInt(), 6);
        // The status bar reads the status enum, not a string.
        auto* status = window->findChild<QQuickItem*>(QStringLiteral("engineStatus"));
        QVERIFY(status);
        QCOMPARE(status->property("text").toString(), QStringLiteral("ready"));

        // The panel's answer figures are the engine's latest answer: none yet.
        QQuickItem* answer_share = gui_test::find_item(window->contentItem(), QStringLiteral("answerShareLabel"));
        QVERIFY(answer_share);
        QCOMPARE(answer_share->property("text").toString(), QStringLiteral("No answer from this model yet"));

        // Send: the answer streams into the last row while generating.
        chat.set_max_tokens(400);
        chat.set_temperature(0.0);
        QSignalSpy content_changes(chat.messages(), &QAbstractItemModel::dataChanged);
        chat.send(QStringLiteral("In the beginning"));
        QVERIFY(chat.generating());
        QCOMPARE(chat.messages()->rowCount(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(!chat.messages()->messages().back().content.isEmpty(), 30000);
        QVERIFY(chat.generating());
        QCOMPARE(list->property("count").toInt(), 2);

        // Stop (Esc in the window) ends it early.
        QTest::keyClick(window, Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        QVERIFY(chat.messages()->messages().back().stats.contains(QStringLiteral("stopped")));
        QVERIFY2(chat.history_error().isEmpty(), qPrintable(chat.history_error()));
        QVERIFY(content_changes.count() >= 1);

        // The split view saw tokens: some layer had active neurons (it shows the latest reading a
        // few times a second, so within a quarter of a second).
        const auto active = [&] {
            int n = 0;
            for (int r = 0; r < engine.layers()->rowCount(); ++r)
                n += engine.layers()->index(r).data(ember::app::LayerSplitModel::ActiveRole).toInt();
            return n;
        };
        QTRY_VERIFY(active() > 0);
        // ... and drew a column per token (the latest ones), with the answer's share beside them.
        const QList<double> shares = engine.recent_shares();
        QVERIFY(!shares.isEmpty() && shares.size() <= engine.recent_tokens());
        for (double share : shares) QVERIFY(share >= 0.0 && share <= 1.0);
        QVERIFY(engine.answer_device_share() >= 0.0 && engine.answer_device_share() <= 1.0);
        QQuickItem* strip_bars = gui_test::find_item(window->contentItem(), QStringLiteral("tokenStripBars"));
        QVERIFY(strip_bars);
        QTRY_COMPARE(strip_bars->property("count").toInt(), int(shares.size()));
        QTRY_COMPARE(answer_share->property("text").toString(),
                     QStringLiteral("Latest answer: %1 % of active neurons on the device · %2 tok/s")
                         .arg(QString::number(engine.answer_device_share() * 100, 'f', 0),
                              QString::number(engine.tokens_per_second(), 'f', 1)));

        // Regenerate replaces the answer; a greedy answer is the same text again.
        const QString first = chat.messages()->messages().back().content;
        chat.set_max_tokens(8);
        chat.regenerate();
        QCOMPARE(chat.messages()->rowCount(), 2);
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        const QString second = chat.messages()->messages().back().content;
        QVERIFY(!second.isEmpty());
        // Under the answer: its tokens and speed, the prompt's, the time to the first token, why it stopped.
        static const QRegularExpression stats_line(QStringLiteral(
            "^\\d+ tokens · [\\d.]+ tok/s · prompt \\d+ tokens at [\\d.]+ tok/s · first token \\d+ ms · \\S"));
        QVERIFY2(stats_line.match(chat.messages()->messages().back().stats).hasMatch(),
                 qPrintable(chat.messages()->messages().back().stats));
        QVERIFY2(first.startsWith(second.left(first.size())) || second.startsWith(first),
                 qPrintable(first + " | " + second));

        // The context meter: the prompt and the answer's tokens, out of the context's 2048.
        QTRY_COMPARE(engine.context_size(), 2048);
        QVERIFY(engine.context_used() > 8 && engine.context_used() < 2048);
        QQuickItem* meter = gui_test::find_item(window->contentItem(), QStringLiteral("contextLabel"));
        QVERIFY(meter);
        QTRY_COMPARE(meter->property("text").toString(),
                     QStringLiteral("%1 / 2048 tokens").arg(engine.context_used()));
        QVERIFY(meter->isVisible());


        // The slider's re-plan: a budget that holds everything puts every neuron on the device.
        QSignalSpy device(&engine, &ember::app::EngineController::deviceChanged);
        engine.setBudget(64.0 * 1024 * 1024);
        QTRY_VERIFY_WITH_TIMEOUT(device.count() >= 1, 10000);
        QCOMPARE(engine.hot_neurons(), engine.total_neurons());
        QVERIFY(engine.used_bytes() <= 64.0 * 1024 * 1024);
        // The per-layer bars show the new placement at once, before another answer runs.
        // They stay so when the view's next refresh (a quarter of a second) shows the stopped
        // answer's last token, taken under the old placement.
        const auto* layers = engine.layers();
        QVERIFY(layers->rowCount() > 0);
        for (int pass = 0; pass < 2; ++pass) {
            for (int il = 0; il < layers->rowCount(); ++il) {
                const QModelIndex row = layers->index(il);
                QCOMPARE(layers->data(row, ember::app::LayerSplitModel::HotRole).toInt(),
                         layers->data(row, ember::app::LayerSplitModel::NeuronsRole).toInt());
            }
            QTest::qWait(400);
        }
        // The panel's VRAM bar: dense parts, the KV cache and hot neurons, adding up to what is used.
        QVERIFY(engine.dense_bytes() > 0 && engine.kv_bytes() > 0 && engine.hot_bytes() > 0);
        QCOMPARE(engine.dense_bytes() + engine.kv_bytes() + engine.hot_bytes(), engine.used_bytes());
        QQuickItem* legend = gui_test::find_item(window->contentItem(), QStringLiteral("vramLegendKV cache"));
        QVERIFY(legend);
        QTRY_COMPARE(legend->property("text").toString(),
                     QStringLiteral("KV cache %1 MiB").arg(engine.kv_bytes() / 1048576.0, 0, 'f', 1));
        // Hovering a part of the legend says in a line what it is.
        const QString tip = QStringLiteral("The conversation so far, as the model keeps it in memory.");
        QVERIFY(!gui_test::shows_text(window->contentItem(), tip));
        // The pointer moves there again on each try (a pixel apart): the panel may still be settling
        // its layout under a slow build, and the item under the pointer is only found on a move.
        int moves = 0;
        const auto hover_legend = [&] {
            QTest::mouseMove(window, legend->mapToScene(QPointF(legend->width() / 2 + moves++ % 2, legend->height() / 2)).toPoint());
            return gui_test::shows_text(window->contentItem(), tip);
        };
        QTRY_VERIFY_WITH_TIMEOUT(hover_legend(), 30000);

        // Everything is in the database: the user's message and both answers as siblings, the
        // stopped one and the regenerated one, with their text and stats.
        auto db = ember::store::ChatStore::open(ember::app::AppShell::database_path(dir.path() + "/data"),
                                                ember::store::ChatStore::OpenMode::Worker);
        QVERIFY2(db.ok(), qPrintable(db.error()));
        auto path = db.value()->activePath(chat.chat_id());
        QVERIFY(path.ok());
        QCOMPARE(path.value().size(), 2);
        QCOMPARE(path.value()[0].content, QStringLiteral("In the beginning"));
        QCOMPARE(path.value()[1].content, second);
        QCOMPARE(path.value()[1].status, ember::store::MessageStatus::Complete);
        QCOMPARE(path.value()[1].stats.genTokens.value_or(0), qint64(8));
        auto siblings = db.value()->siblings(path.value()[1].id);
        QVERIFY(siblings.ok());
        QCOMPARE(siblings.value().ids.size(), 2);
        auto stopped = db.value()->message(siblings.value().ids[0]);
        QVERIFY(stopped.ok());
        QCOMPARE(stopped.value().content, first);
        QCOMPARE(stopped.value().stats.stopReason, QStringLiteral("stopped"));

        // Ctrl+Shift+C copies the conversation on screen as Markdown.
        QGuiApplication::clipboard()->clear();
        QTest::keyClick(window, Qt::Key_C, Qt::ControlModifier | Qt::ShiftModifier);
        const QString copied = QGuiApplication::clipboard()->text();
        QVERIFY2(copied.contains(QStringLiteral("In the beginning")) && copied.contains(second.trimmed()), qPrintable(copied));
        QVERIFY(!copied.contains(first.trimmed()) || second.startsWith(first));

        // The chat's context length: the next answer runs in a session of that size.
        chat.set_context_length(1024);
        QCOMPARE(engine.context_size(), 2048);  // not before the next answer
        chat.regenerate();
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        QTRY_COMPARE(engine.context_size(), 1024);
        QVERIFY(engine.context_used() > 8 && engine.context_used() < 1024);
        QTRY_COMPARE(meter->property("text").toString(), QStringLiteral("%1 / 1024 tokens").arg(engine.context_used()));
        QVERIFY(engine.kv_bytes_per_token() > 0);

        // A context that cannot be made (the old one is freed first, for a GPU's sake) brings the
        // old size back, and the chat goes on in it.
        QSignalSpy failed(&engine, &ember::app::EngineController::generationFailed);
        ember::app::GenerationRequest too_big;
        too_big.prompt = QStringLiteral("In the beginning");
        too_big.max_tokens = 1;
        too_big.n_ctx = 1 << 21;
        engine.generate(too_big);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 30000);
        QVERIFY2(failed.at(0).at(0).toString().contains(QLatin1String("cannot make a context of 2097152 tokens")),
                 qPrintable(failed.at(0).at(0).toString()));
        QCOMPARE(failed.at(0).at(1).value<ember::ErrorCode>(), ember::ErrorCode::Failed);  // not a full context
        QTRY_COMPARE(engine.status(), ember::app::EngineController::Status::Ready);
        QTRY_COMPARE(engine.context_size(), 1024);
        chat.regenerate();
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(engine.context_size(), 1024);
        QVERIFY(engine.context_used() > 8);

        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // A dense model uses the same slider and split view: the budget places whole layers on the
    // device (sim without a GPU), their neurons count as on the device, and the text is the CPU's.
    void dense_model_offloads_layers_by_the_slider() {
        QTemporaryDir dir;
        const QString model = dir.filePath("model.dense.q4_0.gguf");
        QVERIFY(QFile::copy(QStringLiteral(EMBER_TEST_DATA_DIR) + "/tiny-relu-llama/model.dense.q4_0.gguf", model));
        // Half the bytes: some layers on the device, the rest on the CPU.
        slider_moves_the_ffn_and_keeps_the_text(dir.path(), model, 6, [](double used) { return used / 2; });
    }

    // A mixture of experts (SmallThinker's graph): the slider places whole experts after the dense
    // parts, or single neurons in PowerInfer's layout (down weights transposed); the split view
    // counts their neurons, and the text is the CPU's.
    void mixture_of_experts_is_placed_by_the_slider_data() {
        QTest::addColumn<bool>("transposed");
        QTest::addColumn<double>("off");  // bytes the budget takes from what everything needs
        // Less half the experts (each 3 × 768 Q4_0 rows of 256: 144 bytes a row): the dense parts
        // and the first layers' experts.
        QTest::newRow("whole experts") << false << 0.5 * 4 * 8 * 3 * 768 * 144;
        // A third of the neurons' bytes (each an up and a down row: 288 bytes).
        QTest::newRow("single neurons") << true << 4 * 8 * 768 * 288 / 3.0;
    }
    void mixture_of_experts_is_placed_by_the_slider() {
        QFETCH(bool, transposed);
        QFETCH(double, off);
        QTemporaryDir dir;
        const QString model = dir.filePath("smallthinker.q4_0.gguf");
        QStringList args{"-o", model, "--arch", "smallthinker", "--type", "Q4_0", "--n-layer", "4", "--n-embd", "256",
                         "--n-head", "4", "--n-head-kv", "2", "--n-ff", "768", "--n-vocab", "32000", "--experts", "8"};
        if (transposed) args << "--down-t";
        QProcess synth;
        synth.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model", args);
        QVERIFY(synth.waitForFinished(60000) && synth.exitCode() == 0);
        slider_moves_the_ffn_and_keeps_the_text(dir.path(), model, 4, [off](double used) { return used - off; });
    }

    // A dense SwiGLU model with a calibration beside it: the side panel offers its measured
    // levels, choosing one loads the model again at that level (its text still streams), another
    // level then runs on the same weights, the choice survives a restart, and a calibration that no longer fits leaves the model dense
    // with the reason shown.
    void activation_sparsity_is_chosen_by_its_measured_cost() {
        QTemporaryDir dir;
        const QString model = dir.filePath("swiglu.gguf");
        const auto run = [](const QString& tool, const QStringList& args) {
            QProcess p;
            p.start(QStringLiteral(EMBER_TOOLS_DIR) + "/" + tool, args);
            return p.waitForFinished(300000) && p.exitCode() == 0;
        };
        // Small enough to stay quick under the sanitizers: what is tested is the window's choice.
        QVERIFY(run("ember-synth-model", {"-o", model, "--type", "Q4_0", "--n-layer", "2", "--n-embd", "128", "--n-head", "2",
                                          "--n-ff", "512", "--n-vocab", "512"}));
        QVERIFY(run("ember-calibrate", {"-m", model, "-f", QStringLiteral(EMBER_TEST_DATA_DIR) + "/tiny-relu-llama/val.txt", "-c",
                                        "64", "--max-tokens", "256", "--quality-tokens", "128", "-t", "2"}));
        QVERIFY(QFileInfo::exists(dir.filePath("swiglu.sparsity.gguf")));
        const QString data = dir.path() + "/data";
        {
            ember::app::AppShell shell(options(data, model));
            QQuickWindow* window = shown_window(shell);
            QVERIFY(window);
            auto& engine = shell.engine();
            QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
            QCOMPARE(engine.activation_sparsity(), 0.0);
            const QVariantList levels = engine.sparsity_levels();
            QCOMPARE(levels.size(), 7);
            QCOMPARE(levels.front().toMap().value("level").toDouble(), 0.25);
            QQuickItem* combo = gui_test::find_item(window->contentItem(), QStringLiteral("sparsityCombo"));
            QVERIFY(combo && combo->isVisible());
            QCOMPARE(combo->property("count").toInt(), 8);  // "Off" and the seven levels
            QVERIFY2(combo->property("displayText").toString().startsWith(QStringLiteral("Off")),
                     qPrintable(combo->property("displayText").toString()));

            QSignalSpy model_changed(&engine, &ember::app::EngineController::modelChanged);
            engine.setActivationSparsity(0.5);
            QTRY_VERIFY_WITH_TIMEOUT(model_changed.count() >= 1 && engine.status() == ember::app::EngineController::Status::Ready, 30000);
            QCOMPARE(engine.activation_sparsity(), 0.5);
            QVERIFY(engine.sparsity_note().isEmpty());
            QTRY_VERIFY(combo->property("displayText").toString().contains(QStringLiteral("50 %")));
            QQuickItem* detail = gui_test::find_item(window->contentItem(), QStringLiteral("sparsityDetail"));
            QVERIFY(detail && detail->isVisible());
            QVERIFY2(detail->property("text").toString().contains(QStringLiteral("Skips 50 %")),
                     qPrintable(detail->property("text").toString()));
            // Beside its cost, the speed the calibration measured for the level on this machine.
            const double speed = levels.at(2).toMap().value("speed").toDouble();
            QVERIFY2(speed > 0.0, qPrintable(QString::number(speed)));
            const QString shown = QString::number(speed, 'f', 2);
            QVERIFY2(combo->property("displayText").toString().contains(shown + QStringLiteral("× speed")),
                     qPrintable(combo->property("displayText").toString()));
            QVERIFY2(detail->property("text").toString().contains(shown + QStringLiteral(" times the exact model's speed")),
                     qPrintable(detail->property("text").toString()));
            QVERIFY2(engine.model_description().endsWith(QStringLiteral("50 % activation sparsity")), qPrintable(engine.model_description()));
            auto& chat = shell.chat();
            chat.set_temperature(0.0);
            chat.set_max_tokens(8);
            chat.send(QStringLiteral("In the beginning"));
            QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
            QVERIFY(!chat.messages()->messages().back().content.isEmpty());

            // The API server runs the level the chat runs.
            shell.settings().set_serve_port(free_port());
            shell.serve().start();
            QTRY_VERIFY(shell.serve().serving());
            const auto served_sparsity = [&] {
                auto models = httplib::Client("127.0.0.1", shell.settings().serve_port()).Get("/v1/models");
                if (!models || models->status != 200) return -1.0;
                return QJsonDocument::fromJson(QByteArray::fromStdString(models->body))
                    .object()["data"].toArray().first().toObject()["meta"].toObject()["activation_sparsity"].toDouble();
            };
            QCOMPARE(served_sparsity(), 0.5);

            // Another level, picked in the window, runs on the weights already loaded: the same
            // model handle, the conversation going on.
            const std::shared_ptr<const ember::Model> weights = engine.model_handle();
            QVERIFY(QMetaObject::invokeMethod(combo, "activated", Q_ARG(int, 1)));  // 25 %, after "Off"
            QTRY_COMPARE_WITH_TIMEOUT(engine.activation_sparsity(), 0.25, 30000);
            QCOMPARE(engine.model_handle(), weights);
            QVERIFY2(engine.model_description().endsWith(QStringLiteral("25 % activation sparsity")), qPrintable(engine.model_description()));
            QTRY_VERIFY(combo->property("displayText").toString().contains(QStringLiteral("25 %")));
            const qsizetype before = chat.messages()->messages().size();
            chat.send(QStringLiteral("And then"));
            QTRY_VERIFY_WITH_TIMEOUT(!chat.generating() && chat.messages()->messages().size() == before + 2, 30000);
            QVERIFY(!chat.messages()->messages().back().content.isEmpty());
            QTRY_COMPARE(served_sparsity(), 0.25);  // the API server follows the chat's level
            shell.serve().stop();
        }
        {
            ember::app::AppShell again(options(data, model));
            QQuickWindow* window = shown_window(again);
            QVERIFY(window);
            auto& engine = again.engine();
            QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
            QCOMPARE(engine.activation_sparsity(), 0.25);
            // The choice shows the level the model runs at, not "Off".
            QQuickItem* combo = gui_test::find_item(window->contentItem(), QStringLiteral("sparsityCombo"));
            QVERIFY(combo);
            QTRY_VERIFY2(combo->property("displayText").toString().contains(QStringLiteral("25 %")),
                         qPrintable(combo->property("displayText").toString()));
        }
        // The model file changed: its calibration no longer fits.
        {
            QFile f(model);
            QVERIFY(f.open(QIODevice::Append));
            f.write(QByteArray(32, '\0'));
        }
        ember::app::AppShell changed(options(data, model));
        QVERIFY(changed.start());
        QTRY_COMPARE_WITH_TIMEOUT(changed.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        QCOMPARE(changed.engine().activation_sparsity(), 0.0);
        QVERIFY(changed.engine().sparsity_levels().isEmpty());
        QVERIFY2(changed.engine().sparsity_note().contains(QStringLiteral("swiglu.sparsity.gguf")) &&
                     changed.engine().sparsity_note().contains(QStringLiteral("ember-calibrate")),
                 qPrintable(changed.engine().sparsity_note()));
        auto& chat = changed.chat();
        chat.set_max_tokens(4);
        chat.send(QStringLiteral("In the beginning"));
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
        QVERIFY(!chat.messages()->messages().back().content.isEmpty());
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // A dense SwiGLU model without a calibration is measured in the background on the shipped
    // text: the panel shows the progress, the levels appear when it is done, and the calibration
    // is beside the model, complete. Stop leaves nothing behind and is remembered; the button
    // starts it again; a text it cannot use shows ember-calibrate's reason.
    void activation_sparsity_is_measured_in_the_background() {
        QTemporaryDir dir;
        const auto synth = [&](const QString& name, const QStringList& shape) {
            QProcess p;
            p.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model",
                    QStringList{"-o", dir.filePath(name), "--type", "Q4_0", "--n-vocab", "512"} + shape);
            return p.waitForFinished(60000) && p.exitCode() == 0;
        };
        // One quick to measure, one that takes long enough to be stopped.
        const QString model = dir.filePath("swiglu.gguf"), large = dir.filePath("large.gguf");
        QVERIFY(synth("swiglu.gguf", {"--n-layer", "2", "--n-embd", "128", "--n-head", "2", "--n-ff", "512"}));
        QVERIFY(synth("large.gguf", {"--n-layer", "8", "--n-embd", "512", "--n-head", "8", "--n-ff", "2048"}));
        const QString calibration = dir.filePath("swiglu.sparsity.gguf"), large_calibration = dir.filePath("large.sparsity.gguf");
        const auto with_text = [&](const QString& data, int max_tokens, const QString& text = QStringLiteral(EMBER_CALIBRATION_TEXT),
                                   const QString& file = {}) {
            ember::app::AppOptions o = options(data, file.isEmpty() ? model : file);
            o.calibration = {QStringLiteral(EMBER_TOOLS_DIR) + "/ember-calibrate", text, max_tokens, 128, 64};
            return o;
        };
        const auto button = [](QQuickWindow* window) {
            return gui_test::find_item(window->contentItem(), QStringLiteral("calibrationButton"));
        };
        const auto click = [](QQuickWindow* window, QQuickItem* item) {
            QTest::mouseClick(window, Qt::LeftButton, {}, item->mapToScene(QPointF(item->width() / 2, item->height() / 2)).toPoint());
        };
        {
            // A PowerInfer model has its own predictors: nothing to measure.
            ember::app::AppShell shell(with_text(dir.path() + "/demo", 512, QStringLiteral(EMBER_CALIBRATION_TEXT),
                                                 gui_test::copy_demo_model(dir.path())));
            QVERIFY(shell.start());
            QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            QVERIFY(!shell.engine().calibration()->running() && !shell.engine().calibration()->available());
        }
        {
            // Stopped by the user, from the window: nothing is written, and it stays stopped.
            ember::app::AppShell shell(with_text(dir.path() + "/stopped", 1 << 20, QStringLiteral(EMBER_CALIBRATION_TEXT), large));
            QQuickWindow* window = shown_window(shell);
            QVERIFY(window);
            QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            auto* cal = shell.engine().calibration();
            QVERIFY(cal->running());
            QQuickItem* stop = button(window);
            QVERIFY(stop);
            QTRY_VERIFY(stop->isVisible());
            QCOMPARE(stop->property("text").toString(), QStringLiteral("Stop"));
            click(window, stop);
            QTRY_VERIFY(!cal->running());
            QCOMPARE(cal->note(), QStringLiteral("Measuring stopped."));
            QVERIFY(cal->available());
            QVERIFY(!QFileInfo::exists(large_calibration));
            QVERIFY(!QFileInfo::exists(large_calibration + ".part"));
            QCOMPARE(shell.settings().calibrations_declined(), QStringList{large});
        }
        {
            ember::app::AppShell again(with_text(dir.path() + "/stopped", 1 << 20, QStringLiteral(EMBER_CALIBRATION_TEXT), large));
            QQuickWindow* window = shown_window(again);
            QVERIFY(window);
            QTRY_COMPARE_WITH_TIMEOUT(again.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            auto* cal = again.engine().calibration();
            QVERIFY(!cal->running());
            QQuickItem* start = button(window);
            QTRY_VERIFY(start && start->isVisible());
            QCOMPARE(start->property("text").toString(), QStringLiteral("Measure activation sparsity"));
            click(window, start);
            QTRY_VERIFY(cal->running());
            QVERIFY(again.settings().calibrations_declined().isEmpty());
        }
        QVERIFY(!QFileInfo::exists(large_calibration + ".part"));
        {
            // A text too short for a calibration: ember-calibrate's reason, naming the text.
            const QString text = dir.filePath("short.txt");
            QFile f(text);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("In the beginning.");
            f.close();
            ember::app::AppShell shell(with_text(dir.path() + "/short", 512, text));
            QVERIFY(shell.start());
            auto* cal = shell.engine().calibration();
            QTRY_VERIFY_WITH_TIMEOUT(cal->note().startsWith(QStringLiteral("Measuring failed: ")), 30000);
            QVERIFY2(cal->note().contains(text) && cal->note().contains(QStringLiteral("at least 64")), qPrintable(cal->note()));
            QVERIFY(!cal->running() && cal->available());
            QVERIFY(!QFileInfo::exists(calibration) && !QFileInfo::exists(calibration + ".part"));
        }
        ember::app::AppShell shell(with_text(dir.path() + "/measured", 512));
        QQuickWindow* window = shown_window(shell);
        QVERIFY(window);
        auto& engine = shell.engine();
        auto* cal = engine.calibration();
        QTRY_VERIFY_WITH_TIMEOUT(cal->running(), 30000);
        QVERIFY(engine.sparsity_levels().isEmpty());
        QQuickItem* progress = gui_test::find_item(window->contentItem(), QStringLiteral("calibrationProgress"));
        QVERIFY(progress);
        QTRY_VERIFY(progress->isVisible());
        QList<double> seen;
        QObject::connect(cal, &ember::app::SparsityCalibrator::changed, cal, [&] { if (cal->running()) seen.append(cal->progress()); });
        QTRY_VERIFY_WITH_TIMEOUT(!cal->running(), 120000);
        QVERIFY2(cal->note().isEmpty(), qPrintable(cal->note()));
        QVERIFY(!seen.isEmpty());
        QVERIFY(std::is_sorted(seen.begin(), seen.end()));
        QVERIFY(seen.back() > 0.9 && seen.back() <= 1.0);
        QVERIFY(QFileInfo::exists(calibration));
        QVERIFY(!QFileInfo::exists(calibration + ".part"));
        QCOMPARE(engine.sparsity_levels().size(), 7);
        QVERIFY(!cal->available());
        QQuickItem* combo = gui_test::find_item(window->contentItem(), QStringLiteral("sparsityCombo"));
        QTRY_VERIFY(combo && combo->isVisible());
        QCOMPARE(combo->property("count").toInt(), 8);
        QVERIFY(!button(window)->isVisible());
        // The level chosen from the new calibration runs.
        engine.setActivationSparsity(0.5);
        QTRY_VERIFY_WITH_TIMEOUT(engine.activation_sparsity() == 0.5 && engine.status() == ember::app::EngineController::Status::Ready,
                                 30000);
        QVERIFY(engine.sparsity_note().isEmpty());
        QVERIFY(!cal->running());
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The app (the real program) measures a dense model with the ember-calibrate beside it, at the
    // lowest priority, and the measuring ends with the app even when the app is killed outright.
    void measuring_ends_with_a_killed_app() {
#if defined(Q_OS_LINUX)
        QTemporaryDir dir;
        const QString model = dir.filePath("dense.gguf");
        QProcess synth;
        synth.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember-synth-model",
                    {"-o", model, "--type", "Q4_0", "--n-vocab", "512", "--n-layer", "8", "--n-embd", "512", "--n-head", "8",
                     "--n-ff", "2048"});
        QVERIFY(synth.waitForFinished(60000) && synth.exitCode() == 0);
        QProcess app;
        app.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        app.start(QStringLiteral(EMBER_TOOLS_DIR) + "/ember", {"--data-dir", dir.filePath("data"), "--model", model});
        QVERIFY(app.waitForStarted());
        // The app's children named ember-calibrate (/proc/PID/stat: pid (comm) state ppid …).
        const auto calibrators = [&] {
            QList<qint64> found;
            for (const QString& pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
                QFile f(QStringLiteral("/proc/%1/stat").arg(pid));
                if (!f.open(QIODevice::ReadOnly)) continue;
                const QByteArray stat = f.readAll();
                const qsizetype close = stat.lastIndexOf(')');
                const QList<QByteArray> rest = stat.mid(close + 2).split(' ');
                if (stat.contains("(ember-calibrate)") && rest.size() > 1 && rest[1].toLongLong() == app.processId())
                    found << pid.toLongLong();
            }
            return found;
        };
        QTRY_VERIFY_WITH_TIMEOUT(!calibrators().isEmpty(), 60000);
        const qint64 child = calibrators().front();
        QFile stat(QStringLiteral("/proc/%1/stat").arg(child));
        QVERIFY(stat.open(QIODevice::ReadOnly));
        const QByteArray fields = stat.readAll();
        QCOMPARE(fields.mid(fields.lastIndexOf(')') + 2).split(' ').value(16), QByteArray("19"));  // nice
        app.kill();
        QVERIFY(app.waitForFinished(10000));
        // Gone, or a zombie left for whichever process adopts it to reap.
        const auto running = [&] {
            QFile f(QStringLiteral("/proc/%1/stat").arg(child));
            if (!f.open(QIODevice::ReadOnly)) return false;
            const QByteArray now = f.readAll();
            return now.mid(now.lastIndexOf(')') + 2, 1) != "Z";
        };
        QTRY_VERIFY_WITH_TIMEOUT(!running(), 10000);
#else
        QSKIP("reads the processes from Linux's /proc");
#endif
    }

    void first_run_puts_the_demo_model_in_the_library() {
        // No model given: the first run copies the bundled model into the library and opens it;
        // the library lists it; a later run opens the library's copy again.
        QTemporaryDir dir;
        ember::app::AppOptions o;
        o.data_dir = dir.path() + "/data";
        o.bundled_model = gui_test::copy_demo_model(dir.path());
        const QString installed = ember::app::AppShell::demo_model_path(o.data_dir, o.bundled_model);
        {
            ember::app::AppShell shell(o);
            QVERIFY(shell.start());
            QVERIFY(QFileInfo::exists(installed));
            QVERIFY(QFileInfo::exists(QFileInfo(installed).absolutePath() + "/activation/activation_0.pt"));
            QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            QCOMPARE(shell.engine().model_path(), installed);
            QTRY_COMPARE_WITH_TIMEOUT(shell.hub().library()->rowCount(), 1, 10000);
        }
        ember::app::AppShell again(o);
        QVERIFY(again.start());
        QTRY_COMPARE_WITH_TIMEOUT(again.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        QCOMPARE(again.engine().model_path(), installed);
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The model picker above the chat lists the library, each file with its fit (a file the
    // engine cannot run says why), shows the loaded model, and loads the one chosen with the
    // keyboard as with the mouse.
    void model_picker_lists_the_library_and_loads_the_choice() {
        QTemporaryDir dir;
        ember::app::AppOptions o = options(dir.path() + "/data", {});
        o.bundled_model = gui_test::copy_demo_model(dir.path());
        const QString models = o.data_dir + "/models";
        const QString dense = models + "/Test/Tiny-Dense/model.dense.q4_0.gguf";
        const QString gemma = models + "/Test/Gemma3n-Small/gemma3n.Q4_K_M.gguf";
        QVERIFY(QDir().mkpath(QFileInfo(dense).absolutePath()) && QDir().mkpath(QFileInfo(gemma).absolutePath()));
        QVERIFY(QFile::copy(QStringLiteral(EMBER_TEST_DATA_DIR) + "/tiny-relu-llama/model.dense.q4_0.gguf", dense));
        QFile g(gemma);
        QVERIFY(g.open(QIODevice::WriteOnly) && g.write(gui_test::gemma3n_gguf()) > 0);
        g.close();

        ember::app::AppShell shell(o);
        QVERIFY(shell.start());
        auto& engine = shell.engine();
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
        const QString demo = engine.model_path();
        auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
        QVERIFY(window && QTest::qWaitForWindowExposed(window));
        QQuickItem* picker = gui_test::find_item(window->contentItem(), QStringLiteral("modelPicker"));
        QVERIFY(picker);
        QTRY_COMPARE_WITH_TIMEOUT(picker->property("count").toInt(), 3, 10000);
        QTRY_COMPARE(picker->property("displayText").toString(), engine.model_name());
        QVERIFY(picker->isEnabled());

        const auto* library = shell.hub().library();
        int demo_row = -1, dense_row = -1, gemma_row = -1;
        for (int r = 0; r < library->rowCount(); ++r) {
            const QString path = library->index(r).data(ember::app::LibraryModel::PathRole).toString();
            if (path == demo) demo_row = r;
            else if (path == dense) dense_row = r;
            else if (path == gemma) gemma_row = r;
        }
        QVERIFY(demo_row >= 0 && dense_row >= 0 && gemma_row >= 0);
        const auto fit = [&](int row, int role) { return library->index(row).data(role).toString(); };
        QTRY_COMPARE(fit(gemma_row, ember::app::LibraryModel::FitRole), QStringLiteral("cannotrun"));
        QCOMPARE(fit(gemma_row, ember::app::LibraryModel::FitTextRole),
                 QStringLiteral("can't run yet: architecture gemma3n is not supported"));
        for (const int row : {demo_row, dense_row}) {
            const QString kind = fit(row, ember::app::LibraryModel::FitRole);
            QVERIFY2(kind == "gpu" || kind == "hybrid" || kind == "cpu", qPrintable(kind));
            QVERIFY(!fit(row, ember::app::LibraryModel::FitTextRole).isEmpty());
        }

        // Down from the row above the dense model's (the combo steps from where it stands).
        picker->forceActiveFocus();
        picker->setProperty("currentIndex", dense_row - 1);
        QTest::keyClick(window, Qt::Key_Down);
        QTRY_COMPARE_WITH_TIMEOUT(engine.model_path(), dense, 30000);
        QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
        QTRY_COMPARE(picker->property("displayText").toString(), engine.model_name());
        QVERIFY(!engine.sparse());
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // An answer with a <think> section, Markdown and a fenced code block: the thoughts start
    // folded and open on a click, the code is highlighted, and Copy puts exactly the code on
    // the clipboard.
    void answers_show_code_and_thoughts() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        QVERIFY(QDir().mkpath(dir.path() + "/data"));
        {
            auto store = ember::store::ChatStore::open(ember::app::AppShell::database_path(dir.path() + "/data"));
            QVERIFY2(store.ok(), qPrintable(store.error()));
            ember::store::ChatStore& db = *store.value();
            const auto chat = db.createChat(QStringLiteral("Loops"));
            QVERIFY(chat.ok());
            const auto user = db.addMessage(chat.value(), std::nullopt, ember::store::Role::User, QStringLiteral("A loop?"));
            QVERIFY(user.ok());
            QVERIFY(db.addMessage(chat.value(), user.value(), ember::store::Role::Assistant,
                                         QStringLiteral("<think>\nThey want Python.\n</think>\n\nHere is **one**:\n\n"
                                                        "```python\nfor i in range(3):\n    print(i)\n```\n\nDone."))
                        .ok());
        }
        ember::app::AppShell shell(options(dir.path() + "/data", model));
        QVERIFY(shell.start());
        auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
        QVERIFY(window);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        QQuickItem* root = window->contentItem();
        QTRY_VERIFY(gui_test::find_item(root, QStringLiteral("codeBlock")));
        QQuickItem* code = gui_test::find_item(root, QStringLiteral("codeText"));
        QVERIFY(code);
        QVERIFY2(code->property("text").toString().contains(QStringLiteral(">for</span>")),
                 qPrintable(code->property("text").toString()));

        QGuiApplication::clipboard()->clear();
        QQuickItem* copy = gui_test::find_item(root, QStringLiteral("copyCodeButton"));
        QVERIFY(copy);
        QVERIFY(QMetaObject::invokeMethod(copy, "clicked"));
        QCOMPARE(QGuiApplication::clipboard()->text(), QStringLiteral("for i in range(3):\n    print(i)"));
        // A whole message copies as its Markdown source, thoughts and fences included.
        QQuickItem* answer = gui_test::find_item(root, QStringLiteral("message1"));
        QVERIFY(answer);
        QVERIFY(QMetaObject::invokeMethod(gui_test::find_item(answer, QStringLiteral("copyMessageButton")), "clicked"));
        QVERIFY(QGuiApplication::clipboard()->text().startsWith(QStringLiteral("<think>\nThey want Python.")));
        QVERIFY(QGuiApplication::clipboard()->text().endsWith(QStringLiteral("```\n\nDone.")));

        QQuickItem* thoughts = gui_test::find_item(root, QStringLiteral("thinkText"));
        QVERIFY(thoughts);
        QVERIFY(!thoughts->isVisible());
        QVERIFY(QMetaObject::invokeMethod(gui_test::find_item(root, QStringLiteral("thinkToggle")), "clicked"));
        QTRY_VERIFY(thoughts->isVisible());
        QCOMPARE(thoughts->property("text").toString().trimmed(), QStringLiteral("They want Python."));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // Every text colour of the theme module reads at WCAG AA (4.5:1) on every surface it is
    // drawn on, in both themes, and the window's controls draw with the module's colours.
    void theme_text_reads_on_every_surface() {
        QTemporaryDir dir;
        ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
        QQuickWindow* window = shown_window(shell);
        QVERIFY(window);
        QQmlComponent probe(&shell.qml());
        probe.setData("import QtQuick\nimport Ember\nQtObject { property var theme: Theme }", QUrl());
        std::unique_ptr<QObject> holder(probe.create());
        QVERIFY2(holder, qPrintable(probe.errorString()));
        auto* theme = holder->property("theme").value<QObject*>();
        QVERIFY(theme);
        const auto colour = [&](const char* name) { return theme->property(name).value<QColor>(); };
        auto* palette = window->property("palette").value<QObject*>();
        for (const QString& name : {QStringLiteral("light"), QStringLiteral("dark")}) {
            shell.settings().set_theme(name);
            QTRY_COMPARE(theme->property("dark").toBool(), name == QLatin1String("dark"));
            QCOMPARE(palette->property("window").value<QColor>(), colour("window"));
            QCOMPARE(palette->property("windowText").value<QColor>(), colour("text"));
            const QColor base = colour("base");
            for (const char* text : {"text", "mutedText", "accent", "error", "success", "warning", "special", "neutral"}) {
                const QColor badge = blend(colour(text), base, theme->property("badgeTint").toDouble());
                for (const QColor& surface : {colour("window"), base, colour("alternate"), badge})
                    QVERIFY2(contrast(colour(text), surface) >= 4.5,
                             qPrintable(QString("%1: %2 on %3 is %4:1").arg(name, text, surface.name())
                                            .arg(contrast(colour(text), surface), 0, 'f', 2)));
            }
            QVERIFY(contrast(colour("accentText"), colour("accent")) >= 4.5);
            QVERIFY(contrast(colour("text"), colour("userBubble")) >= 4.5);
        }
    }

    // The icons are SVG files in the QML module: each reads as an image (the SVG plugin is there)
    // with something drawn on it.
    void icons_load() {
        const QDir icons(QStringLiteral(":/qt/qml/Ember/icons"));
        const QStringList files = icons.entryList({QStringLiteral("*.svg")});
        QVERIFY2(files.size() >= 8, qPrintable(files.join(' ')));
        for (const QString& file : files) {
            QImageReader reader(icons.filePath(file));
            const QImage image = reader.read();
            QVERIFY2(!image.isNull(), qPrintable(file + ": " + reader.errorString()));
            int drawn = 0;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x) drawn += qAlpha(image.pixel(x, y)) > 0;
            QVERIFY2(drawn > image.width(), qPrintable(file));
        }
    }

    // Theme and text size apply to the window at once and, with its size, come back after a
    // restart.
    void appearance_applies_and_is_restored() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QQuickWindow* window = shown_window(shell);
            QVERIFY(window);
            auto* palette = window->property("palette").value<QObject*>();
            QVERIFY(palette);
            const double base_size = window->property("font").value<QFont>().pointSizeF();
            shell.settings().set_theme(QStringLiteral("dark"));
            QTRY_COMPARE(palette->property("window").value<QColor>(), QColor(QStringLiteral("#1c1d20")));
            QCOMPARE(palette->property("windowText").value<QColor>(), QColor(QStringLiteral("#e7e8ea")));
            // A message, so the setting can be seen reaching the messages' text too.
            QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            shell.chat().set_max_tokens(4);
            shell.chat().send(QStringLiteral("In the beginning"));
            QTRY_VERIFY_WITH_TIMEOUT(!shell.chat().generating(), 30000);
            QQuickItem* message = nullptr;
            QTRY_VERIFY_WITH_TIMEOUT((message = gui_test::find_item(window->contentItem(), QStringLiteral("messageText"))), 30000);
            QTRY_COMPARE_WITH_TIMEOUT(message->property("font").value<QFont>().pointSizeF(), base_size, 30000);
            shell.settings().set_font_scale(1.5);
            QTRY_COMPARE(window->property("font").value<QFont>().pointSizeF(), base_size * 1.5);
            QTRY_COMPARE(message->property("font").value<QFont>().pointSizeF(), base_size * 1.5);
            auto* answer = gui_test::find_item(window->contentItem(), QStringLiteral("liveText"));
            QVERIFY(answer);
            QCOMPARE(answer->property("font").value<QFont>().pointSizeF(), base_size * 1.5);
            window->resize(900, 640);
            QTRY_COMPARE(window->width(), 900);
            window->close();
        }
        ember::app::AppShell again(options(dir.path() + "/data", model));
        QCOMPARE(again.settings().theme(), QStringLiteral("dark"));
        QVERIFY(again.start());
        auto* window = qobject_cast<QQuickWindow*>(again.qml().rootObjects().first());
        QTRY_COMPARE(window->width(), 900);
        QCOMPARE(window->height(), 640);
        auto* palette = window->property("palette").value<QObject*>();
        QCOMPARE(palette->property("window").value<QColor>(), QColor(QStringLiteral("#1c1d20")));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // Quitting from the tray closes no window, yet its geometry is kept; a saved position on no
    // screen (a monitor since unplugged) is not restored, the size is.
    void window_geometry_survives_quitting_and_lost_screens() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QQuickWindow* window = shown_window(shell);
            QVERIFY(window);
            window->resize(820, 600);
            QTRY_COMPARE(window->width(), 820);
        }  // the app quits with its window open
        {
            ember::app::AppShell again(options(dir.path() + "/data", model));
            QCOMPARE(again.settings().window_geometry().size(), QSize(820, 600));
            again.settings().set_window_geometry(QRect(-30000, -30000, 780, 540));
        }
        ember::app::AppShell third(options(dir.path() + "/data", model));
        QVERIFY(third.start());
        auto* window = qobject_cast<QQuickWindow*>(third.qml().rootObjects().first());
        QTRY_COMPARE(window->width(), 780);
        QVERIFY2(QGuiApplication::screenAt(window->geometry().center()),
                 qPrintable(QStringLiteral("at %1,%2").arg(window->x()).arg(window->y())));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // Every control on every page, and in the dialogs, has a name a screen reader can say.
    void every_control_has_an_accessible_name() {
        QTemporaryDir dir;
        ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
        QVERIFY(shell.start());
        QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
        QVERIFY(QTest::qWaitForWindowExposed(window));
        // An answer, so that messages show their buttons.
        shell.chat().set_max_tokens(8);
        shell.chat().send(QStringLiteral("In the beginning"));
        QTRY_VERIFY_WITH_TIMEOUT(!shell.chat().generating(), 30000);
        auto* tabs = window->findChild<QObject*>(QStringLiteral("mainTabs"));
        QVERIFY(tabs);
        QStringList missing;
        for (int tab : {0, 1}) {
            tabs->setProperty("currentIndex", tab);
            QCoreApplication::processEvents();
            unnamed_controls(window->contentItem(), missing);
        }
        tabs->setProperty("currentIndex", 0);
        for (const char* dialog : {"showWelcome", "showShortcuts"}) {
            QVERIFY(QMetaObject::invokeMethod(window, dialog));
            QTest::qWait(300);  // the popup's enter transition
            unnamed_controls(window->contentItem(), missing);
            QTest::keyClick(window, Qt::Key_Escape);
            QTest::qWait(300);
        }
        // Chat settings (Ctrl+,) and search (Ctrl+K).
        for (const auto& [key, modifiers] : {std::pair{Qt::Key_Comma, Qt::ControlModifier}, std::pair{Qt::Key_K, Qt::ControlModifier}}) {
            QTest::keyClick(window, key, modifiers);
            QTest::qWait(300);
            unnamed_controls(window->contentItem(), missing);
            QTest::keyClick(window, Qt::Key_Escape);
            QTest::qWait(300);
        }
        missing.removeDuplicates();
        QVERIFY2(missing.isEmpty(), qPrintable(missing.join('\n')));
        // The chat reads as a list of who said what, in plain text, each answer with how it ended.
        const auto& rows = shell.chat().messages()->messages();
        QCOMPARE(rows.size(), 2);
        for (int r = 0; r < 2; ++r) {
            QQuickItem* row = gui_test::find_item(window->contentItem(), QStringLiteral("message%1").arg(r));
            QVERIFY(row);
            QCOMPARE(QQmlProperty::read(row, QStringLiteral("Accessible.role"), qmlContext(row)).toInt(),
                     int(QAccessible::ListItem));
            const QString expected = r == 0 ? QStringLiteral("You: In the beginning")
                                            : QStringLiteral("Model: ") + rows[1].content + QStringLiteral(" (") +
                                                  rows[1].stats + QStringLiteral(")");
            QCOMPARE(accessible_name(row), expected);
        }
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The status bar always says where the model runs and why no GPU is used. With a GPU, the
    // side panel's switch turns it off (the model loads again, all on the CPU, the budget has
    // nothing to hold) and the choice is kept for the next start. Without one, the switch shows
    // off and cannot be turned on, and the budget previews a GPU whatever the saved choice.
    void gpu_switch_moves_the_model_and_is_remembered() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        const ember::GpuProbe probe = ember::probe_gpus();
        const ember::GpuInfo* gpu = probe.first_usable();
        {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QVERIFY(shell.start());
            auto& engine = shell.engine();
            QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
            QVERIFY(engine.gpu_enabled());
            QCOMPARE(engine.gpu_found(), gpu != nullptr);
            auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
            QVERIFY(QTest::qWaitForWindowExposed(window));
            auto* status = window->findChild<QQuickItem*>(QStringLiteral("deviceStatus"));
            auto* toggle = window->findChild<QQuickItem*>(QStringLiteral("useGpuSwitch"));
            auto* budget = window->findChild<QQuickItem*>(QStringLiteral("budgetSlider"));
            QVERIFY(status && toggle && budget);
            const QString before = status->property("text").toString();
            const auto click_toggle = [&] {
                QTest::mouseClick(window, Qt::LeftButton, {},
                                  toggle->mapToScene(QPointF(toggle->width() / 2, toggle->height() / 2)).toPoint());
            };
            if (!gpu) {
                QVERIFY2(before.contains(QString::fromStdString(probe.reason)), qPrintable(before));
                QCOMPARE(engine.device_name(), QStringLiteral("sim"));
                QVERIFY(!toggle->property("checked").toBool());
                QVERIFY(!toggle->isEnabled());
                QVERIFY(toggle->property("text").toString().contains(QStringLiteral("none found")));
                QVERIFY(budget->isEnabled());
                click_toggle();
                QTest::qWait(200);
                QVERIFY(shell.settings().use_gpu());
                QVERIFY(!toggle->property("checked").toBool());
                // A choice saved on a machine with a GPU changes nothing here: still the preview.
                QSignalSpy reloaded(&engine, &ember::app::EngineController::modelChanged);
                shell.settings().set_use_gpu(false);
                QTRY_VERIFY_WITH_TIMEOUT(reloaded.count() > 0, 30000);
                QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
                QCOMPARE(engine.device_name(), QStringLiteral("sim"));
                QVERIFY2(!engine.device_note().contains("turned off by you"), qPrintable(engine.device_note()));
                QVERIFY(budget->isEnabled());
            } else {
                QCOMPARE(before, "GPU: " + QString::fromStdString(gpu->name));
                QVERIFY(toggle->property("checked").toBool());
                QVERIFY(toggle->isEnabled());
                click_toggle();
                QTRY_VERIFY(!engine.gpu_enabled());
                QVERIFY(!shell.settings().use_gpu());
                QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
                QTRY_VERIFY2(engine.device_note().contains("turned off by you"), qPrintable(engine.device_note()));
                QCOMPARE(engine.device_name(), QStringLiteral("cpu"));
                QCOMPARE(engine.hot_neurons(), 0.0);
                QTRY_VERIFY(!budget->isEnabled());
                QTRY_VERIFY2(status->property("text").toString().startsWith("CPU · No GPU in use: turned off by you"),
                             qPrintable(status->property("text").toString()));
            }
        }
        if (gpu) {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QVERIFY(!shell.engine().gpu_enabled());
            QVERIFY(shell.start());
            QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            QVERIFY2(shell.engine().device_note().contains("turned off by you"), qPrintable(shell.engine().device_note()));
            shell.settings().set_use_gpu(true);
            QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            QTRY_VERIFY2(!shell.engine().device_note().contains("turned off by you"), qPrintable(shell.engine().device_note()));
        }
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The Serve switch puts the loaded model behind the OpenAI API on localhost: a real client
    // gets an answer, the request shows in the panel, the chat history stays as it was, and
    // switching off closes the port.
    void serve_switch_serves_the_loaded_model() {
        QTemporaryDir dir;
        ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
        shell.settings().set_serve_port(free_port());
        QVERIFY(shell.start());
        QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
        QVERIFY(QTest::qWaitForWindowExposed(window));
        auto* toggle = window->findChild<QQuickItem*>(QStringLiteral("serveSwitch"));
        QVERIFY(toggle);
        const auto click = [&] {
            QTest::mouseClick(window, Qt::LeftButton, {},
                              toggle->mapToScene(QPointF(toggle->width() / 2, toggle->height() / 2)).toPoint());
        };
        const int conversations = shell.history().conversations()->rowCount();
        click();
        QTRY_VERIFY(shell.serve().serving());
        const int port = shell.settings().serve_port();
        auto* url = window->findChild<QQuickItem*>(QStringLiteral("serveUrlLabel"));
        QVERIFY(url);
        QTRY_COMPARE(url->property("text").toString(), QStringLiteral("http://127.0.0.1:%1/v1").arg(port));

        httplib::Client client("127.0.0.1", port);
        auto models = client.Get("/v1/models");
        QVERIFY(models);
        QCOMPARE(models->status, 200);
        QVERIFY2(QString::fromStdString(models->body).contains(QFileInfo(shell.engine().model_path()).fileName()),
                 models->body.c_str());
        auto answer = client.Post("/v1/chat/completions",
                                  R"({"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4})",
                                  "application/json");
        QVERIFY(answer);
        QCOMPARE(answer->status, 200);
        QVERIFY2(QString::fromStdString(answer->body).contains(QLatin1String("\"completion_tokens\":4")), answer->body.c_str());
        QTRY_COMPARE(shell.serve().request_count(), 1);
        auto* requests = window->findChild<QQuickItem*>(QStringLiteral("serveRequestsLabel"));
        QVERIFY(requests);
        QTRY_VERIFY2(requests->property("text").toString().contains(QLatin1String("/v1/chat/completions")),
                     qPrintable(requests->property("text").toString()));
        QCOMPARE(shell.history().conversations()->rowCount(), conversations);

        // Asked to, the app keeps the API's chats: the conversation and the answer, as a chat of its own.
        shell.settings().set_serve_keeps_chats(true);
        auto kept = client.Post("/v1/chat/completions",
                                R"({"messages": [{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": "Who begat Enos?"}], "max_tokens": 3})",
                                "application/json");
        QVERIFY(kept);
        QCOMPARE(kept->status, 200);
        QTRY_COMPARE(shell.history().conversations()->rowCount(), conversations + 1);
        QTRY_COMPARE(shell.serve().request_count(), 2);
        QStringList titles;
        for (const ember::app::ConversationRow& row : shell.history().conversations()->rows()) titles << row.title;
        QVERIFY2(titles.contains(QStringLiteral("API: Who begat Enos?")), qPrintable(titles.join('|')));

        click();
        QTRY_VERIFY(!shell.serve().serving());
        QVERIFY(!httplib::Client("127.0.0.1", port).Get("/health"));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The message box has the keyboard at start and after a dialog closes; Shift+Enter starts a
    // new line, pasted lines stay lines, Enter sends the whole message.
    void message_box_takes_lines_and_keeps_the_keyboard() {
        QTemporaryDir dir;
        ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
        QVERIFY(shell.start());
        auto& chat = shell.chat();
        QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
        QVERIFY(window);
        QVERIFY(QTest::qWaitForWindowExposed(window));
        window->requestActivate();
        auto* input = window->findChild<QQuickItem*>(QStringLiteral("promptInput"));
        QVERIFY(input);
        QTRY_VERIFY_WITH_TIMEOUT(input->hasActiveFocus(), 30000);
        const auto* box = window->findChild<QQuickItem*>(QStringLiteral("promptBox"));
        QVERIFY(box);
        const qreal one_line = box->height();

        const auto type = [&](const char* text) {
            for (const char* c = text; *c; ++c) QTest::keyClick(window, *c);
        };
        type("first line");
        QTest::keyClick(window, Qt::Key_Return, Qt::ShiftModifier);
        type("second line");
        QGuiApplication::clipboard()->setText(QStringLiteral("\nint main() {\n    return 0;\n}"));
        QTest::keyClick(window, Qt::Key_V, Qt::ControlModifier);
        const QString message = QStringLiteral("first line\nsecond line\nint main() {\n    return 0;\n}");
        QCOMPARE(input->property("text").toString(), message);
        QVERIFY(chat.messages()->messages().isEmpty());
        // Five lines: the box grew.
        QTRY_VERIFY2_WITH_TIMEOUT(box->height() > 3 * one_line, qPrintable(QString("%1 -> %2").arg(one_line).arg(box->height())), 30000);

        chat.set_max_tokens(8);
        QTest::keyClick(window, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(!chat.messages()->messages().isEmpty(), 30000);
        QCOMPARE(chat.messages()->messages().first().content, message);
        QCOMPARE(input->property("text").toString(), QString());
        QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);

        // F1 opens the shortcut sheet, which takes the keyboard; closing it gives it back.
        QTest::keyClick(window, Qt::Key_F1);
        QTRY_VERIFY_WITH_TIMEOUT(!input->hasActiveFocus(), 30000);
        QTest::keyClick(window, Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(input->hasActiveFocus(), 30000);
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // A file that fails to load names itself and its reason in the chat and gives way to the model
    // that ran before, loaded again: the title, the message box and the engine all stay with it.
    // Without a model before it, the message box says there is none and what to do.
    void a_file_that_fails_to_load_keeps_the_model_before_it() {
        QTemporaryDir dir;
        const QString broken = dir.path() + "/broken-download.gguf";
        {
            QFile f(broken);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write("GGUF\x03\x00\x00\x00 a download cut short");
        }
        {
            ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
            QVERIFY(shell.start());
            auto& engine = shell.engine();
            QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
            const QString model = engine.model_path();
            auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
            QVERIFY(QTest::qWaitForWindowExposed(window));
            auto* bar = window->findChild<QQuickItem*>(QStringLiteral("loadErrorBar"));
            QVERIFY(bar);
            QVERIFY(!bar->isVisible());

            engine.loadModel(broken, 64.0 * 1024 * 1024);
            QTRY_VERIFY_WITH_TIMEOUT(!engine.load_error().isEmpty(), 30000);
            QCOMPARE(engine.status(), ember::app::EngineController::Status::Ready);
            QCOMPARE(engine.model_path(), model);
            QTRY_VERIFY_WITH_TIMEOUT(window->title().contains(engine.model_name()), 30000);
            QVERIFY(bar->isVisible());
            const QString shown = window->findChild<QQuickItem*>(QStringLiteral("loadErrorText"))->property("text").toString();
            QVERIFY2(shown.startsWith("broken-download.gguf could not be loaded: ") && shown.contains("Still using ember-demo"),
                     qPrintable(shown));
            QVERIFY(window->findChild<QQuickItem*>(QStringLiteral("promptInput"))->isEnabled());
            // It still answers.
            shell.chat().set_max_tokens(4);
            shell.chat().send(QStringLiteral("In the beginning"));
            QTRY_VERIFY_WITH_TIMEOUT(!shell.chat().generating(), 30000);
            QVERIFY(!shell.chat().messages()->messages().back().content.isEmpty());
            engine.dismissLoadError();
            QTRY_VERIFY_WITH_TIMEOUT(!bar->isVisible(), 30000);
        }
        ember::app::AppShell shell(options(dir.path() + "/data2", broken));
        QVERIFY(shell.start());
        QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Error, 30000);
        QVERIFY(shell.engine().load_error().startsWith("broken-download.gguf could not be loaded: "));
        auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
        auto* input = window->findChild<QQuickItem*>(QStringLiteral("promptInput"));
        QVERIFY(!input->isEnabled());
        QCOMPARE(input->property("placeholderText").toString(), QStringLiteral("No model loaded — choose one in Models"));
        QVERIFY(window->findChild<QQuickItem*>(QStringLiteral("loadErrorBar"))->isVisible());
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // Below 1100 px the chat list and the device panel step aside so the chat keeps its width and
    // nothing covers Send; each comes back with its button. The window is never smaller than an
    // 800×600 screen allows, and on a 4K-wide one the messages keep a readable line length.
    // The hot-neuron cache (GPU index) of a model outside the app's library goes to the app's
    // data folder, never beside the model (its folder may be read-only or not the app's); a
    // model in the library keeps it beside itself, where deleting the model deletes it.
    void gpu_index_is_written_where_the_app_may_write() {
        QTemporaryDir dir;
        const QString data = dir.path() + "/data";
        const QString outside = gui_test::copy_demo_model(dir.path() + "/elsewhere");
        const QString inside = gui_test::copy_demo_model(data + "/models/local");
        ember::app::AppShell shell(options(data, outside));
        QVERIFY(shell.start());
        auto& engine = shell.engine();
        QTRY_VERIFY_WITH_TIMEOUT(engine.model_path() == outside && engine.status() == ember::app::EngineController::Status::Ready, 30000);
        QTRY_VERIFY(engine.hot_neurons() > 0);  // the sim device holds hot neurons: an index was chosen
        const QStringList cached = QDir(data + "/gpu-index").entryList({QFileInfo(outside).fileName() + ".*.generated.gpuidx"}, QDir::Files);
        QCOMPARE(cached.size(), 1);
        QVERIFY(QFileInfo(data + "/gpu-index/" + cached.first()).size() > 0);
        QVERIFY(!QFile::exists(outside + ".generated.gpuidx"));

        engine.loadModel(inside, double(QFileInfo(inside).size() * 9 / 10));
        QTRY_VERIFY_WITH_TIMEOUT(engine.model_path() == inside && engine.status() == ember::app::EngineController::Status::Ready, 30000);
        QVERIFY(QFile::exists(inside + ".generated.gpuidx"));
        QCOMPARE(QDir(data + "/gpu-index").entryList(QDir::Files).size(), 1);
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // Regenerate and Copy chat do nothing in an empty chat, so they are off there; copying says
    // it copied, as the clipboard shows nothing of itself.
    void chat_actions_need_a_conversation() {
        QTemporaryDir dir;
        ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
        QQuickWindow* window = shown_window(shell);
        QVERIFY(window);
        QQuickItem* root = window->contentItem();
        auto* regenerate = gui_test::find_item(root, QStringLiteral("regenerateButton"));
        auto* copy = gui_test::find_item(root, QStringLiteral("copyChatButton"));
        QVERIFY(regenerate && copy);
        QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        QVERIFY(!regenerate->isEnabled());
        QVERIFY(!copy->isEnabled());
        shell.chat().set_max_tokens(3);
        shell.chat().send(QStringLiteral("In the beginning"));
        QTRY_VERIFY_WITH_TIMEOUT(!shell.chat().generating() && regenerate->isEnabled() && copy->isEnabled(), 30000);
        QCOMPARE(copy->property("text").toString(), QStringLiteral("Copy chat"));
        QTest::mouseClick(window, Qt::LeftButton, {}, copy->mapToScene(QPointF(copy->width() / 2, copy->height() / 2)).toPoint());
        QCOMPARE(copy->property("text").toString(), QStringLiteral("Copied"));
        QVERIFY2(QGuiApplication::clipboard()->text().contains(QStringLiteral("In the beginning")),
                 qPrintable(QGuiApplication::clipboard()->text()));
        QTRY_COMPARE_WITH_TIMEOUT(copy->property("text").toString(), QStringLiteral("Copy chat"), 5000);
        shell.chat().newChat();
        QTRY_VERIFY(!regenerate->isEnabled() && !copy->isEnabled());
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The context meter shows the open chat's tokens: the engine's count after an answer, 0 in a
    // new chat, and the chat's own count again when it is opened, after a switch or a restart,
    // before any answer runs in it (the engine's context then holds nothing of it). A reopened
    // chat is counted from its text, whose tokens may differ by a few from the sampled ones.
    void context_meter_counts_the_open_chat() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        int after_answer = 0;
        qint64 chat_id = 0;
        auto meter_reads = [](QQuickWindow* window, int tokens) {
            QQuickItem* label = gui_test::find_item(window->contentItem(), QStringLiteral("contextLabel"));
            return label && label->isVisible() && label->property("text").toString() == QStringLiteral("%1 / 2048 tokens").arg(tokens);
        };
        {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QQuickWindow* window = shown_window(shell);
            QVERIFY(window);
            auto& chat = shell.chat();
            QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            chat.set_max_tokens(8);
            chat.send(QStringLiteral("In the beginning God created the heaven and the earth."));
            QTRY_VERIFY_WITH_TIMEOUT(!chat.generating(), 30000);
            after_answer = shell.engine().context_used();
            QVERIFY(after_answer > 8);
            QTRY_VERIFY(meter_reads(window, after_answer));
            chat_id = chat.chat_id();

            chat.newChat();
            QTRY_VERIFY(meter_reads(window, 0));
            shell.history().openChat(chat_id);
            QTRY_VERIFY(chat.context_tokens() > 0);
            QVERIFY2(std::abs(chat.context_tokens() - after_answer) <= 4, qPrintable(QString("%1 counted, %2 after the answer")
                                                                                      .arg(chat.context_tokens()).arg(after_answer)));
            QTRY_VERIFY(meter_reads(window, chat.context_tokens()));
        }
        ember::app::AppShell again(options(dir.path() + "/data", model));
        QQuickWindow* window = shown_window(again);
        QVERIFY(window);
        QTRY_COMPARE_WITH_TIMEOUT(again.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        QCOMPARE(again.chat().chat_id(), chat_id);
        QTRY_VERIFY(std::abs(again.chat().context_tokens() - after_answer) <= 4);
        QTRY_VERIFY(meter_reads(window, again.chat().context_tokens()));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The model loaded last and the VRAM budget set for it, by the slider's keys here, are what
    // the next start loads; another model keeps the default budget.
    void the_last_model_and_its_budget_come_back() {
        QTemporaryDir dir;
        const QString first = gui_test::copy_demo_model(dir.path() + "/a");
        const QString second = gui_test::copy_demo_model(dir.path() + "/b");
        const double default_budget = double(QFileInfo(second).size() * 9 / 10);
        double chosen = 0;
        {
            ember::app::AppShell shell(options(dir.path() + "/data", first));
            QQuickWindow* window = shown_window(shell);
            QVERIFY(window);
            auto& engine = shell.engine();
            QTRY_COMPARE_WITH_TIMEOUT(engine.status(), ember::app::EngineController::Status::Ready, 30000);
            engine.loadModel(second, default_budget);
            QTRY_VERIFY_WITH_TIMEOUT(engine.model_path() == second && engine.status() == ember::app::EngineController::Status::Ready, 30000);
            QTRY_COMPARE_WITH_TIMEOUT(engine.budget_bytes(), default_budget, 30000);
            auto* slider = gui_test::find_item(window->contentItem(), QStringLiteral("budgetSlider"));
            QVERIFY(slider && slider->isVisible());
            slider->forceActiveFocus();
            QTest::keyClick(window, Qt::Key_Right);
            QTest::keyClick(window, Qt::Key_Right);
            // Two steps of a fiftieth of the slider's range, applied once the keys rest.
            const double step = std::max(1.0, slider->property("to").toDouble() / 50);
            QTRY_VERIFY_WITH_TIMEOUT(std::abs(engine.budget_bytes() - (default_budget + 2 * step)) < 1.0, 10000);  // whole bytes
            chosen = engine.budget_bytes();
        }
        {
            ember::app::AppShell again(options(dir.path() + "/data", QString()));
            QVERIFY(shown_window(again));
            auto& engine = again.engine();
            QTRY_VERIFY_WITH_TIMEOUT(engine.model_path() == second && engine.status() == ember::app::EngineController::Status::Ready, 30000);
            QTRY_COMPARE_WITH_TIMEOUT(engine.budget_bytes(), chosen, 30000);
            engine.loadModel(first, 12.0 * 1024 * 1024);
            QTRY_VERIFY_WITH_TIMEOUT(engine.model_path() == first && engine.status() == ember::app::EngineController::Status::Ready, 30000);
            QTRY_COMPARE_WITH_TIMEOUT(engine.budget_bytes(), 12.0 * 1024 * 1024, 30000);
        }
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The first window fits the screen it opens on: its default 1180×760 where there is room
    // (the suite's 1920×1080 screen), the screen's free area where there is not (ctest runs this
    // again as tst_app_window_small_screen on 800×600), with Send, the tabs and the buttons
    // that show the hidden panes inside it. A size saved on a larger screen is cut to this one.
    void first_start_fits_the_screen() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        auto check_fits = [](QQuickWindow* window, bool default_size) {
            const QRect free = window->screen()->availableGeometry();
            if (default_size && free.width() >= 1180 && free.height() >= 760)
                QCOMPARE(window->size(), QSize(1180, 760));
            else
                QVERIFY2(window->width() <= free.width() && window->height() <= free.height(),
                         qPrintable(QString("%1×%2 on %3×%4").arg(window->width()).arg(window->height())
                                        .arg(free.width()).arg(free.height())));
            QQuickItem* root = window->contentItem();
            for (const char* name : {"sendButton", "mainTabs", "showChatsButton", "showPanelButton", "promptBox", "chatSettingsButton"}) {
                QQuickItem* item = gui_test::find_item(root, QLatin1String(name));
                QVERIFY2(item && item->isVisible(), name);
                const QRectF r = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
                QVERIFY2(r.left() >= 0 && r.top() >= 0 && r.right() <= window->width() && r.bottom() <= window->height(),
                         qPrintable(QString("%1 at %2,%3 to %4,%5 in %6×%7").arg(name).arg(r.left()).arg(r.top())
                                        .arg(r.right()).arg(r.bottom()).arg(window->width()).arg(window->height())));
            }
        };
        {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QQuickWindow* window = shown_window(shell);
            QVERIFY(window);
            check_fits(window, true);
            if (QTest::currentTestFailed()) return;
        }
        {
            ember::app::AppShell again(options(dir.path() + "/data", model));
            again.settings().set_window_geometry(QRect(0, 0, 4000, 3000));
        }
        ember::app::AppShell shell(options(dir.path() + "/data", model));
        QQuickWindow* window = shown_window(shell);
        QVERIFY(window);
        QTRY_VERIFY(window->width() < 4000);
        check_fits(window, false);
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // At the smallest and a common large size, with a conversation on screen: every control
    // the user can see lies inside the window and on no other (by geometry, the part of each
    // not clipped away by a scrolling view).
    void controls_do_not_overlap_data() {
        QTest::addColumn<QSize>("size");
        QTest::newRow("800x600") << QSize(800, 600);
        QTest::newRow("1920x1080") << QSize(1920, 1080);
    }
    void controls_do_not_overlap() {
        QFETCH(QSize, size);
        QTemporaryDir dir;
        ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
        QQuickWindow* window = shown_window(shell);
        QVERIFY(window);
        window->resize(size);
        QTRY_COMPARE(window->size(), size);
        QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        shell.chat().set_max_tokens(8);
        shell.chat().send(QStringLiteral("In the beginning"));
        QTRY_VERIFY_WITH_TIMEOUT(!shell.chat().generating(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(gui_test::find_item(window->contentItem(), QStringLiteral("copyMessageButton")), 30000);
        QTest::qWait(300);  // the side panes settle for the size

        struct Shown {
            QQuickItem* item;
            QRectF rect;
        };
        std::vector<Shown> shown;
        const auto is_control = [](QQuickItem* item) {
            for (const char* type : {"QQuickAbstractButton", "QQuickComboBox", "QQuickSlider", "QQuickSpinBox", "QQuickTextArea",
                                     "QQuickTextField"})
                if (item->inherits(type)) return true;
            return false;
        };
        std::function<void(QQuickItem*, QRectF)> walk = [&](QQuickItem* item, QRectF clip) {
            if (!item->isVisible() || item->opacity() == 0.0) return;
            const QRectF rect = item->mapRectToScene(QRectF(0, 0, item->width(), item->height()));
            if (item->clip()) clip = clip.intersected(rect);
            if (is_control(item)) {
                const QRectF seen = rect.intersected(clip);
                if (seen.width() > 1 && seen.height() > 1) shown.push_back({item, seen});
                return;  // a control's own parts are not controls beside it
            }
            for (QQuickItem* child : item->childItems()) walk(child, clip);
        };
        walk(window->contentItem(), QRectF(QPointF(0, 0), QSizeF(size)));
        QVERIFY2(shown.size() >= 8, qPrintable(QString::number(shown.size())));
        const auto describe = [](const Shown& s) {
            const QString name = s.item->objectName().isEmpty() ? s.item->property("text").toString() : s.item->objectName();
            return QString("%1 '%2' at %3,%4 %5×%6").arg(s.item->metaObject()->className(), name).arg(s.rect.x()).arg(s.rect.y())
                .arg(s.rect.width()).arg(s.rect.height());
        };
        for (size_t i = 0; i < shown.size(); ++i) {
            const QRectF& r = shown[i].rect;
            QVERIFY2(r.left() >= -0.5 && r.top() >= -0.5 && r.right() <= size.width() + 0.5 && r.bottom() <= size.height() + 0.5,
                     qPrintable(describe(shown[i]) + " leaves the window"));
            for (size_t j = i + 1; j < shown.size(); ++j) {
                const QRectF both = r.intersected(shown[j].rect);
                // Tabs share their one-pixel border.
                QVERIFY2(both.width() <= 1.5 || both.height() <= 1.5,
                         qPrintable(describe(shown[i]) + " overlaps " + describe(shown[j])));
            }
        }
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    void narrow_and_wide_windows_keep_the_chat_readable() {
        QTemporaryDir dir;
        ember::app::AppShell shell(options(dir.path() + "/data", gui_test::copy_demo_model(dir.path())));
        QVERIFY(shell.start());
        auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
        QVERIFY(QTest::qWaitForWindowExposed(window));
        QVERIFY(window->minimumWidth() <= 800 && window->minimumWidth() >= 640);
        QVERIFY(window->minimumHeight() <= 600 && window->minimumHeight() >= 480);
        QQuickItem* root = window->contentItem();
        auto* panel = gui_test::find_item(root, QStringLiteral("sidePanel"));
        auto* chats = gui_test::find_item(root, QStringLiteral("chatsPane"));
        auto* send = gui_test::find_item(root, QStringLiteral("sendButton"));
        auto* messages = gui_test::find_item(root, QStringLiteral("messageList"));
        QVERIFY(panel && chats && send && messages);
        QTRY_VERIFY_WITH_TIMEOUT(panel->isVisible() && chats->isVisible(), 30000);  // 1180 px: room for both

        window->resize(900, 600);
        QTRY_VERIFY_WITH_TIMEOUT(!panel->isVisible() && !chats->isVisible(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(messages->width() > 800, 30000);
        const QRectF send_rect = send->mapRectToScene(QRectF(0, 0, send->width(), send->height()));
        QVERIFY2(send_rect.right() <= window->width() && send_rect.bottom() <= window->height(),
                 qPrintable(QString("Send at %1,%2").arg(send_rect.right()).arg(send_rect.bottom())));

        auto* show_panel = gui_test::find_item(root, QStringLiteral("showPanelButton"));
        QVERIFY(show_panel);
        QTest::mouseClick(window, Qt::LeftButton, {}, show_panel->mapToScene(QPointF(show_panel->width() / 2, show_panel->height() / 2)).toPoint());
        QTRY_VERIFY_WITH_TIMEOUT(panel->isVisible(), 30000);
        QVERIFY(!chats->isVisible());

        // On a 4K-wide window a long question's bubble stays about 90 characters wide.
        window->resize(3840, 1000);
        QTRY_VERIFY_WITH_TIMEOUT(chats->isVisible(), 30000);
        QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
        shell.chat().set_max_tokens(2);
        shell.chat().send(QString(QStringLiteral("a long line of text without end ")).repeated(20));
        QTRY_VERIFY_WITH_TIMEOUT(!shell.chat().generating(), 30000);
        QQuickItem* bubble = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((bubble = gui_test::find_item(root, QStringLiteral("bubble"))), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(bubble->width() > 300, 30000);
        QVERIFY2(bubble->width() < 0.5 * messages->width(), qPrintable(QString("%1 of %2").arg(bubble->width()).arg(messages->width())));
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The chat open at close reopens at start, even when another is pinned above it; a chat
    // deleted meanwhile falls back to the top of the list.
    void last_chat_reopens() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        QVERIFY(QDir().mkpath(dir.path() + "/data"));
        qint64 ids[3] = {};
        {
            auto store = ember::store::ChatStore::open(ember::app::AppShell::database_path(dir.path() + "/data"));
            QVERIFY2(store.ok(), qPrintable(store.error()));
            for (int i = 0; i < 3; ++i) {
                const auto chat = store.value()->createChat(QStringLiteral("Chat %1").arg(i));
                QVERIFY(chat.ok());
                ids[i] = chat.value();
                QVERIFY(store.value()->addMessage(ids[i], std::nullopt, ember::store::Role::User, QStringLiteral("Q%1").arg(i)).ok());
            }
            QVERIFY(store.value()->setPinned(ids[2], true).ok());
        }
        {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QVERIFY(shell.start());
            QCOMPARE(shell.chat().chat_id(), ids[2]);  // first start: the top of the list, the pinned one
            shell.history().openChat(ids[0]);
            QCOMPARE(shell.chat().chat_id(), ids[0]);
        }
        {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QVERIFY(shell.start());
            QCOMPARE(shell.chat().chat_id(), ids[0]);
            QCOMPARE(shell.chat().messages()->messages().first().content, QStringLiteral("Q0"));
            shell.history().deleteChat(ids[0]);
        }
        ember::app::AppShell shell(options(dir.path() + "/data", model));
        QVERIFY(shell.start());
        QCOMPARE(shell.chat().chat_id(), ids[2]);
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    // The first run shows this computer and a model that fits, once; its button opens the
    // Models tab on the suggested repo.
    void first_run_suggests_a_model_once() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        ember::app::AppOptions o = options(dir.path() + "/data", model);
        o.welcome = true;
        o.hub_endpoint = QStringLiteral("http://127.0.0.1:9");  // nothing listens: no request leaves the machine
        {
            ember::app::AppShell shell(o);
            QVERIFY(shell.start());
            auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
            QVERIFY(QTest::qWaitForWindowExposed(window));
            QObject* welcome = window->findChild<QObject*>(QStringLiteral("welcome"));
            QVERIFY(welcome);
            QTRY_VERIFY(welcome->property("visible").toBool());
            auto* summary = window->findChild<QQuickItem*>(QStringLiteral("hardwareSummary"));
            QVERIFY(summary);
            QVERIFY2(summary->property("text").toString().contains(QStringLiteral("CPU threads")),
                     qPrintable(summary->property("text").toString()));
            const ember::app::ModelSuggestion expected = ember::app::suggest_model(ember::app::detect_hardware());
            QQuickItem* suggestion = window->findChild<QQuickItem*>(QStringLiteral("suggestion"));
            QVERIFY(suggestion);
            if (!expected.repo.isEmpty()) {
                QVERIFY(suggestion->property("text").toString().contains(expected.name));
                QVERIFY(QMetaObject::invokeMethod(window->findChild<QObject*>(QStringLiteral("showSuggestedModel")), "clicked"));
                QTRY_COMPARE(window->findChild<QObject*>(QStringLiteral("mainTabs"))->property("currentIndex").toInt(), 1);
            } else {
                QVERIFY(QMetaObject::invokeMethod(welcome, "close"));
            }
            QTRY_VERIFY(!welcome->property("visible").toBool());
            QVERIFY(shell.settings().welcomed());
        }
        ember::app::AppShell again(o);
        QVERIFY(again.start());
        auto* window = qobject_cast<QQuickWindow*>(again.qml().rootObjects().first());
        QTest::qWait(200);
        QVERIFY(!window->findChild<QObject*>(QStringLiteral("welcome"))->property("visible").toBool());
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }

    void reopening_shows_the_last_chat() {
        QTemporaryDir dir;
        const QString model = gui_test::copy_demo_model(dir.path());
        QString answer;
        {
            ember::app::AppShell shell(options(dir.path() + "/data", model));
            QVERIFY(shell.start());
            QTRY_COMPARE_WITH_TIMEOUT(shell.engine().status(), ember::app::EngineController::Status::Ready, 30000);
            shell.chat().set_max_tokens(6);
            shell.chat().send(QStringLiteral("The LORD is my shepherd"));
            QTRY_VERIFY_WITH_TIMEOUT(!shell.chat().generating(), 30000);
            answer = shell.chat().messages()->messages().back().content;
        }
        ember::app::AppShell again(options(dir.path() + "/data", model));
        QVERIFY(again.start());
        const auto& rows = again.chat().messages()->messages();
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows[0].content, QStringLiteral("The LORD is my shepherd"));
        QCOMPARE(rows[1].content, answer);
        QVERIFY2(gui_test::g_warnings.isEmpty(), qPrintable(gui_test::g_warnings.join('\n')));
    }
};

QTEST_MAIN(TestAppWindow)
#include "tst_app_window.moc"

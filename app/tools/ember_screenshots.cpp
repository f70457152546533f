// Takes the README's screenshots of the real app: `ember-screenshots OUT_DIR [MODEL]` starts the
// app (offscreen or under xvfb-run), sends a prompt and saves the window while the answer
// streams and after it finished. The model is copied to a scratch folder first, so its .gpuidx
// cache is not written beside the original.
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>

#include "app/app_shell.h"
#include "app/engine/model_files.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

namespace {

// Runs the event loop until done() or the timeout; false on timeout.
template <typename F>
bool wait_for(F done, int timeout_ms) {
    QElapsedTimer t;
    t.start();
    while (!done()) {
        if (t.elapsed() > timeout_ms) return false;
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    }
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: ember-screenshots OUT_DIR [MODEL]\n");
        return 2;
    }
    const QString out = QString::fromLocal8Bit(argv[1]);
    QDir().mkpath(out);
    QTemporaryDir scratch;
    const QString model = ember::app::copy_model_with_statistics(
        argc > 2 ? QString::fromLocal8Bit(argv[2]) : QStringLiteral(EMBER_DEMO_MODEL), scratch.path() + "/model");
    ember::app::AppOptions options;
    options.data_dir = scratch.path() + "/data";
    options.model_path = model;
    ember::app::AppShell shell(options);
    if (!shell.start()) return 1;
    auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
    auto& engine = shell.engine();
    auto& chat = shell.chat();
    if (!wait_for([&] { return engine.status() == QLatin1String("ready"); }, 60000)) {
        std::fprintf(stderr, "ember-screenshots: the model did not load: %s\n", qPrintable(engine.error()));
        return 1;
    }
    chat.set_temperature(0.0);
    chat.set_max_tokens(120);
    chat.send(QStringLiteral("And God said, Let there be light"));
    wait_for([&] { return chat.messages()->messages().back().content.size() > 60; }, 60000);
    window->grabWindow().save(out + "/chat-streaming.png");
    wait_for([&] { return !chat.generating(); }, 60000);
    wait_for([] { return false; }, 300);  // let the last frame render
    window->grabWindow().save(out + "/split-view.png");
    std::printf("%s/chat-streaming.png\n%s/split-view.png\n", qPrintable(out), qPrintable(out));
    return 0;
}

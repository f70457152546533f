// Takes the README's screenshots of the real app:
//   ember-screenshots OUT_DIR [MODEL] [--theme light|dark] [--hub ENDPOINT REPO FILE]
// starts the app (offscreen or under xvfb-run) in the theme, 1920×1080, sends a prompt and saves
// the window while the answer streams and after it finished, then the same chat at 800×600;
// with --hub it then opens the Models tab, searches the Hub at ENDPOINT for REPO, opens it,
// downloads FILE and saves the page mid-download (docs/screenshots/take.sh runs it against a
// local stand-in for the Hub). Dark pictures are named with -dark. The model is copied to a
// scratch folder first, so its .gpuidx cache is not written beside the original.
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QtQml/qqmlextensionplugin.h>

#include "app/app_shell.h"
#include "app/hub/library_files.h"
#include "app/hub/download_list_model.h"

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
    QStringList args = app.arguments().mid(1);
    QStringList hub;  // ENDPOINT REPO FILE
    QString theme = QStringLiteral("light");
    if (const qsizetype at = args.indexOf(QStringLiteral("--theme")); at >= 0 && at + 1 < args.size()) {
        theme = args[at + 1];
        args.remove(at, 2);
    }
    if (const qsizetype at = args.indexOf(QStringLiteral("--hub")); at >= 0) {
        hub = args.mid(at + 1, 3);
        args = args.mid(0, at);
    }
    if (args.isEmpty() || args.size() > 2 || (!hub.isEmpty() && hub.size() != 3) ||
        (theme != QLatin1String("light") && theme != QLatin1String("dark"))) {
        std::fprintf(stderr, "usage: ember-screenshots OUT_DIR [MODEL] [--theme light|dark] [--hub ENDPOINT REPO FILE]\n");
        return 2;
    }
    const QString out = args[0];
    QDir().mkpath(out);
    QTemporaryDir scratch;
    const QString model = ember::app::copy_model_with_statistics(
        args.size() > 1 ? args[1] : QStringLiteral(EMBER_DEMO_MODEL), scratch.path() + "/model");
    ember::app::AppOptions options;
    options.data_dir = scratch.path() + "/data";
    options.model_path = model;
    if (!hub.isEmpty()) options.hub_endpoint = hub[0];
    ember::app::AppShell shell(options);
    if (!shell.start()) return 1;
    shell.settings().set_theme(theme);
    auto* window = qobject_cast<QQuickWindow*>(shell.qml().rootObjects().first());
    window->resize(1920, 1080);
    const QString suffix = theme == QLatin1String("dark") ? QStringLiteral("-dark.png") : QStringLiteral(".png");
    const auto save = [&](const QString& name) {
        const QString path = out + "/" + name + suffix;
        window->grabWindow().save(path);
        std::printf("%s\n", qPrintable(path));
    };
    auto& engine = shell.engine();
    auto& chat = shell.chat();
    if (!wait_for([&] { return engine.status() == ember::app::EngineController::Status::Ready; }, 60000)) {
        std::fprintf(stderr, "ember-screenshots: the model did not load: %s\n", qPrintable(engine.error()));
        return 1;
    }
    chat.set_temperature(0.0);
    chat.set_max_tokens(120);
    chat.send(QStringLiteral("And God said, Let there be light"));
    wait_for([&] { return chat.messages()->messages().back().content.size() > 60; }, 60000);
    save(QStringLiteral("chat-streaming"));
    wait_for([&] { return !chat.generating(); }, 60000);
    wait_for([] { return false; }, 300);  // let the last frame render
    save(QStringLiteral("split-view"));
    // The same chat on the smallest screen Ember is made for: the side panes step aside.
    const QSize wide = window->size();
    window->resize(800, 600);
    wait_for([] { return false; }, 300);
    save(QStringLiteral("chat-800x600"));
    window->resize(wide);
    if (hub.isEmpty()) return 0;

    auto* tabs = window->findChild<QObject*>(QStringLiteral("mainTabs"));
    if (tabs) tabs->setProperty("currentIndex", 1);
    auto& models = shell.hub();
    models.search(hub[1].section(QLatin1Char('/'), 1));
    models.openRepo(hub[1]);
    if (!wait_for([&] { return !models.opening() && models.repo_files()->rowCount() > 0; }, 30000)) {
        std::fprintf(stderr, "ember-screenshots: %s did not open: %s\n", qPrintable(hub[1]), qPrintable(models.repo_error()));
        return 1;
    }
    if (!models.download(hub[2])) {
        std::fprintf(stderr, "ember-screenshots: %s is not a model file of %s\n", qPrintable(hub[2]), qPrintable(hub[1]));
        return 1;
    }
    auto* downloads = models.downloads();
    auto progress = [&] { return downloads->index(0).data(ember::app::DownloadListModel::ProgressRole).toDouble(); };
    if (!wait_for([&] { return progress() > 0.3; }, 60000)) {
        std::fprintf(stderr, "ember-screenshots: the download did not progress\n");
        return 1;
    }
    save(QStringLiteral("models-download"));
    return 0;
}

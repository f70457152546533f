// Wires the app: parses the command line, creates the controllers, loads the QML module.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QSystemTrayIcon>
#include <QWindow>
#include <QStandardPaths>
#include <QtQml/qqmlextensionplugin.h>

#include <memory>

#include "app/app_shell.h"
#include "app/self_check.h"
#include "app/tray/tray_icon.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

namespace {

// An installed ember finds the demo model beside itself (<prefix>/bin → <prefix>/share/ember), so
// packages and relocated installs work; a build-tree ember finds it in the source tree.
QString bundled_model() {
    const QString installed = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral(EMBER_DEMO_MODEL_INSTALLED));
    if (QFileInfo::exists(installed)) return QDir::cleanPath(installed);
    return QStringLiteral(EMBER_DEMO_MODEL);
}

// The same for the calibration text; ember-calibrate is installed (and built) beside ember.
ember::app::CalibrationSetup calibration() {
    const QDir here(QCoreApplication::applicationDirPath());
    ember::app::CalibrationSetup setup;
    setup.program = here.filePath(QStringLiteral("ember-calibrate"));
    const QString installed = here.filePath(QStringLiteral(EMBER_CALIBRATION_TEXT_INSTALLED));
    setup.text = QFileInfo::exists(installed) ? QDir::cleanPath(installed) : QStringLiteral(EMBER_CALIBRATION_TEXT);
    return setup;
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Ember"));
    QApplication::setOrganizationName(QStringLiteral("Ember"));
    QApplication::setApplicationVersion(QStringLiteral(EMBER_VERSION));
    QIcon icon;
    for (int size : {16, 24, 32, 48, 64, 128, 256})
        icon.addFile(QStringLiteral(":/icons/io.github.emberapp.Ember-%1.png").arg(size));
    QApplication::setWindowIcon(icon);

    QCommandLineParser cli;
    cli.setApplicationDescription(QStringLiteral("Local LLM chat with predictor-guided hybrid sparse inference"));
    cli.addHelpOption();
    cli.addVersionOption();
    const QCommandLineOption data_dir({QStringLiteral("data-dir")}, QStringLiteral("Database, settings and models."),
                                      QStringLiteral("DIR"));
    const QCommandLineOption model({QStringLiteral("model")}, QStringLiteral("Model file to load at start."),
                                   QStringLiteral("PATH"));
    const QCommandLineOption hub_endpoint({QStringLiteral("hub-endpoint")},
                                          QStringLiteral("Hugging Face Hub or mirror to use (default: HF_ENDPOINT)."),
                                          QStringLiteral("URL"));
    const QCommandLineOption self_check({QStringLiteral("self-check")},
                                        QStringLiteral("Load the model, answer PROMPT in the window, stop the answer once it "
                                                       "streams, regenerate it, print what happened and quit (exit status 0 "
                                                       "when all of that worked without a QML warning)."),
                                        QStringLiteral("PROMPT"));
    cli.addOptions({data_dir, model, hub_endpoint, self_check});
    cli.process(app);

    const QString data = cli.isSet(data_dir) ? cli.value(data_dir)
                                             : QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    if (!QDir().mkpath(data)) qFatal("cannot create the data folder %s", qPrintable(data));

    ember::app::AppOptions options;
    options.data_dir = data;
    options.model_path = cli.value(model);
    options.hub_endpoint = cli.value(hub_endpoint);
    options.bundled_model = bundled_model();
    options.calibration = calibration();
    options.welcome = !cli.isSet(self_check);
    ember::app::AppShell shell(options);
    std::unique_ptr<ember::app::SelfCheck> check;
    if (cli.isSet(self_check)) check = std::make_unique<ember::app::SelfCheck>(shell, cli.value(self_check), 120'000);
    if (!shell.start()) return 1;
    if (check) check->start();
    std::unique_ptr<ember::app::TrayIcon> tray;
    if (QSystemTrayIcon::isSystemTrayAvailable() && !cli.isSet(self_check))
        tray = std::make_unique<ember::app::TrayIcon>(shell, qobject_cast<QWindow*>(shell.qml().rootObjects().first()));
    return QApplication::exec();
}

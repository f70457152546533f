// Wires the app: parses the command line, creates the controllers, loads the QML module.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QStandardPaths>
#include <QtQml/qqmlextensionplugin.h>

#include "app/app_shell.h"

Q_IMPORT_QML_PLUGIN(Ember_AppPlugin)
Q_IMPORT_QML_PLUGIN(EmberPlugin)

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("Ember"));
    QApplication::setOrganizationName(QStringLiteral("Ember"));
    QApplication::setApplicationVersion(QStringLiteral(EMBER_VERSION));

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
    cli.addOptions({data_dir, model, hub_endpoint});
    cli.process(app);

    const QString data = cli.isSet(data_dir) ? cli.value(data_dir)
                                             : QStandardPaths::writableLocation(QStandardPaths::AppDataLocation);
    if (!QDir().mkpath(data)) qFatal("cannot create the data folder %s", qPrintable(data));

    ember::app::AppOptions options;
    options.data_dir = data;
    options.model_path = cli.value(model);
    options.hub_endpoint = cli.value(hub_endpoint);
    options.bundled_model = QStringLiteral(EMBER_DEMO_MODEL);
    ember::app::AppShell shell(options);
    if (!shell.start()) return 1;
    return QApplication::exec();
}

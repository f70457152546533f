#include "app/app_shell.h"

#include <QFileInfo>

namespace ember::app {

AppShell::AppShell(const AppOptions& options) : options_(options), engine_(nullptr), chat_(&engine_) {
    EngineController::set_instance(&engine_);
    ChatController::set_instance(&chat_);
}

AppShell::~AppShell() {
    EngineController::set_instance(nullptr);
    ChatController::set_instance(nullptr);
}

bool AppShell::start() {
    qml_.addImportPath(QStringLiteral("qrc:/qt/qml"));
    qml_.load(QUrl(QStringLiteral("qrc:/qt/qml/Ember/Main.qml")));
    if (qml_.rootObjects().isEmpty()) return false;
    // Without a GPU the sim device previews a card; nine tenths of the model shows a real split.
    engine_.loadModel(options_.model_path, double(QFileInfo(options_.model_path).size() * 9 / 10));
    return true;
}

}  // namespace ember::app

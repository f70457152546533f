#pragma once
// Everything the running app is, minus main(): the controllers, handed to QML as singletons,
// and the QML engine showing Main.qml. main() and the end-to-end test build the same thing.

#include <QQmlApplicationEngine>
#include <QString>

#include "app/chat/chat_controller.h"
#include "app/engine/engine_controller.h"

namespace ember::app {

struct AppOptions {
    QString data_dir;
    QString model_path;  // loaded at start
};

class AppShell {
public:
    explicit AppShell(const AppOptions& options);
    ~AppShell();

    // Loads Main.qml and starts loading the model; false when the QML failed to load.
    bool start();

    EngineController& engine() { return engine_; }
    ChatController& chat() { return chat_; }
    QQmlApplicationEngine& qml() { return qml_; }

private:
    AppOptions options_;
    EngineController engine_;
    ChatController chat_;
    QQmlApplicationEngine qml_;  // last: destroyed first, while the controllers it shows exist
};

}  // namespace ember::app

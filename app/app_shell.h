#pragma once
// Everything the running app is, minus main(): the controllers, handed to QML as singletons,
// and the QML engine showing Main.qml. main() and the end-to-end test build the same thing.

#include <QQmlApplicationEngine>
#include <QString>

#include <memory>

#include "app/chat/chat_controller.h"
#include "app/chat/history_controller.h"
#include "app/engine/engine_controller.h"
#include "app/hub/hub_controller.h"
#include "app/serve/serve_controller.h"
#include "app/hub/token_keychain.h"
#include "app/settings/app_settings.h"
#include "app/store/chat_store.h"

namespace ember::app {

struct AppOptions {
    QString data_dir;
    QString model_path;  // loaded at start; empty: the model used last, else the library's copy of the demo model, if there
    QString hub_endpoint;  // empty: HF_ENDPOINT, else huggingface.co
    // The demo model shipped with the app (read-only where installed). On the first run it is
    // copied into the library, so it is listed, deletable, and its .gpuidx cache is written in
    // the user's data rather than beside the installed file.
    QString bundled_model;
    // The first-run screen (this computer, a model that fits) until the user has closed it once.
    // main() turns it on; tests that are not about it leave it off.
    bool welcome = false;
    // Measuring a dense model's activation sparsity in the background (ember-calibrate and the
    // text it runs on). main() gives the installed text; tests that are not about it leave the
    // text empty, and a model is then measured only when the user asks.
    CalibrationSetup calibration;
};

class AppShell {
public:
    explicit AppShell(const AppOptions& options);
    ~AppShell();

    // Loads Main.qml and starts loading the model; false when the QML failed to load.
    bool start();

    EngineController& engine() { return engine_; }
    AppSettings& settings() { return settings_; }
    ChatController& chat() { return chat_; }
    HistoryController& history() { return history_; }
    HubController& hub() { return hub_; }
    ServeController& serve() { return serve_; }
    static QString database_path(const QString& data_dir);
    // Where the first run puts the bundled demo model.
    static QString demo_model_path(const QString& data_dir, const QString& bundled_model);
    QQmlApplicationEngine& qml() { return qml_; }

private:
    AppOptions options_;
    bool first_run_;  // no chat database existed yet
    std::unique_ptr<store::ChatStore> store_;  // <data dir>/chats.db; null when it cannot be opened
    QString store_error_;
    AppSettings settings_;  // <data dir>/settings.json
    EngineController engine_;
    ChatController chat_;
    HistoryController history_;
    TokenKeychain keychain_;
    HubController hub_;  // models in <data_dir>/models
    ServeController serve_;  // the API server on localhost, over engine_'s model
    QQmlApplicationEngine qml_;  // last: destroyed first, while the controllers it shows exist
};

}  // namespace ember::app

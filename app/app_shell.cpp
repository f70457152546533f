#include "app/app_shell.h"

#include <QDir>
#include <QFileInfo>
#include <QWindow>

#include "app/hub/library_files.h"
#include "app/scene_graph_backend.h"

namespace ember::app {

namespace {

std::unique_ptr<store::ChatStore> open_store(const QString& path, QString& error) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    auto store = store::ChatStore::open(path);
    if (!store) {
        error = store.error();
        return nullptr;
    }
    return std::move(store.value());
}

}  // namespace

QString AppShell::database_path(const QString& data_dir) { return data_dir + QStringLiteral("/chats.db"); }

QString AppShell::demo_model_path(const QString& data_dir, const QString& bundled_model) {
    return data_dir + QStringLiteral("/models/ember/ember-demo/") + QFileInfo(bundled_model).fileName();
}

AppShell::AppShell(const AppOptions& options)
    : options_(options),
      first_run_(!QFileInfo::exists(database_path(options.data_dir))),
      store_(open_store(database_path(options.data_dir), store_error_)),
      settings_(options.data_dir + QStringLiteral("/settings.json")),
      engine_(nullptr),
      chat_(&engine_, store_.get(), &settings_),
      history_(&chat_, store_.get(), &settings_),
      hub_(options.data_dir + QStringLiteral("/models"), options.hub_endpoint, &engine_,
           options.data_dir + QStringLiteral("/downloads.json"), &settings_),
      serve_(&engine_, &settings_, &history_) {
    EngineController::set_instance(&engine_);
    AppSettings::set_instance(&settings_);
    ChatController::set_instance(&chat_);
    HistoryController::set_instance(&history_);
    HubController::set_instance(&hub_);
    ServeController::set_instance(&serve_);
    if (TokenKeychain::built_in()) hub_.set_keychain(&keychain_);
    engine_.set_gpu_enabled(settings_.use_gpu());
    engine_.set_sparsity_choices(settings_.activation_sparsities());
    QObject::connect(&engine_, &EngineController::sparsityChoiceChanged, &settings_,
                     [this](const QString& path, double level) { settings_.set_activation_sparsity_for(path, level); });
    engine_.calibration()->set_setup(options.calibration);
    engine_.calibration()->set_declined(settings_.calibrations_declined());
    QObject::connect(engine_.calibration(), &SparsityCalibrator::declined_changed, &settings_,
                     [this](const QStringList& models) { settings_.set_calibrations_declined(models); });
    engine_.set_gpu_index_folders(options.data_dir + QStringLiteral("/models"), options.data_dir + QStringLiteral("/gpu-index"));
    engine_.set_budget_choices(settings_.budgets());
    QObject::connect(&engine_, &EngineController::budgetChoiceChanged, &settings_,
                     [this](const QString& path, double bytes) { settings_.set_budget_for(path, bytes); });
    QObject::connect(&engine_, &EngineController::modelChanged, &settings_, [this] {
        if (!engine_.model_path().isEmpty()) settings_.set_last_model(engine_.model_path());
    });
    QObject::connect(&settings_, &AppSettings::changed, &engine_, [this] { engine_.set_gpu_enabled(settings_.use_gpu()); });
}

AppShell::~AppShell() {
    if (chat_.chat_id() != 0) settings_.set_last_chat(chat_.chat_id());
    // Quitting from the tray (or the session ending) closes no window: its geometry is kept here.
    if (!qml_.rootObjects().isEmpty())
        if (auto* window = qobject_cast<QWindow*>(qml_.rootObjects().first()); window && window->isVisible())
            settings_.set_window_geometry(window->geometry());
    EngineController::set_instance(nullptr);
    AppSettings::set_instance(nullptr);
    ChatController::set_instance(nullptr);
    HistoryController::set_instance(nullptr);
    HubController::set_instance(nullptr);
    ServeController::set_instance(nullptr);
}

bool AppShell::start() {
    // Before the window is made: on a software OpenGL, Qt Quick draws in software.
    if (const SceneGraphChoice g = choose_scene_graph_backend(); g.software)
        qInfo("OpenGL is %s (no GPU): Qt Quick draws in software", qPrintable(g.gl_renderer));
    qml_.addImportPath(QStringLiteral("qrc:/qt/qml"));
    qml_.load(QUrl(QStringLiteral("qrc:/qt/qml/Ember/Main.qml")));
    if (qml_.rootObjects().isEmpty()) return false;
    if (!store_error_.isEmpty()) qWarning("chat history is not saved: %s", qPrintable(store_error_));
    if (!settings_.error().isEmpty()) qWarning("settings: %s", qPrintable(settings_.error()));
    history_.open_latest_chat();
    if (options_.welcome && !settings_.welcomed())
        QMetaObject::invokeMethod(qml_.rootObjects().first(), "showWelcome");
    // The model given on the command line, else the one used last, else the bundled demo.
    QString model = options_.model_path;
    if (model.isEmpty() && QFileInfo::exists(settings_.last_model())) model = settings_.last_model();
    if (!options_.bundled_model.isEmpty()) {
        const QString demo = demo_model_path(options_.data_dir, options_.bundled_model);
        if (first_run_ && !QFileInfo::exists(demo)) {
            if (copy_model_with_statistics(options_.bundled_model, QFileInfo(demo).absolutePath()).isEmpty())
                qWarning("could not copy the demo model %s into the library", qPrintable(options_.bundled_model));
            hub_.refreshLibrary();
        }
        if (model.isEmpty() && QFileInfo::exists(demo)) model = demo;
    }
    // Without a GPU the sim device previews a card; nine tenths of the model shows a real split.
    if (!model.isEmpty()) engine_.loadModel(model, double(QFileInfo(model).size() * 9 / 10));
    return true;
}

}  // namespace ember::app

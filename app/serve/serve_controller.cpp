#include "app/serve/serve_controller.h"

#include <QClipboard>
#include <QFileInfo>
#include <QGuiApplication>
#include <QJSEngine>
#include <QTime>

#include "app/chat/history_controller.h"
#include "app/engine/engine_controller.h"
#include "app/settings/app_settings.h"
#include "server/api_server.h"
#include "server/generation_queue.h"

namespace ember::app {
namespace {

ServeController* g_instance = nullptr;


QString describe(const server::RequestRecord& r) {
    const QString when = QTime::currentTime().toString(QStringLiteral("HH:mm:ss"));
    if (!r.error.empty())
        return QObject::tr("%1  %2  refused (%3): %4").arg(when, QString::fromStdString(r.path)).arg(r.status)
            .arg(QString::fromStdString(r.error));
    return QObject::tr("%1  %2  %3 + %4 tokens, %5 tok/s%6")
        .arg(when, QString::fromStdString(r.path))
        .arg(r.prompt_tokens)
        .arg(r.completion_tokens)
        .arg(r.tokens_per_second, 0, 'f', 1)
        .arg(r.finish_reason == "cancelled" ? QObject::tr(", client left") : QString());
}

}  // namespace

ServeController::ServeController(EngineController* engine, AppSettings* settings, HistoryController* history,
                                 QObject* parent)
    : QObject(parent), engine_(engine), settings_(settings), history_(history) {
    connect(engine_, &EngineController::modelChanged, this, &ServeController::follow_engine);
    connect(engine_, &EngineController::statusChanged, this, &ServeController::follow_engine);
}

ServeController::~ServeController() {
    if (g_instance == this) g_instance = nullptr;
}

ServeController* ServeController::create(QQmlEngine*, QJSEngine*) {
    Q_ASSERT(g_instance);
    QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
    return g_instance;
}

void ServeController::set_instance(ServeController* controller) { g_instance = controller; }

QString ServeController::url() const {
    if (!server_) return {};
    return QStringLiteral("http://%1:%2/v1").arg(QString::fromStdString(server_->host())).arg(server_->port());
}

void ServeController::start() {
    if (server_) return;
    server::ServerOptions options;
    options.port = settings_->serve_port();
    options.api_key = settings_->serve_api_key().toStdString();
    auto started = server::ApiServer::start(options);
    if (!started) {
        error_ = QString::fromStdString(started.error().message);
        emit changed();
        return;
    }
    server_ = std::move(*started);
    // Called on the server's threads; the line is added on this one.
    server_->set_request_observer([this](const server::RequestRecord& r) {
        QMetaObject::invokeMethod(this, [this, r] { add_request(r); }, Qt::QueuedConnection);
    });
    error_.clear();
    served_model_.reset();
    follow_engine();
    emit changed();
}

void ServeController::stop() {
    if (!server_) return;
    server_.reset();
    served_model_.reset();
    emit changed();
}

void ServeController::copyUrl() const {
    if (server_) QGuiApplication::clipboard()->setText(url());
}

void ServeController::follow_engine() {
    if (!server_) return;
    const bool ready = engine_->status() == EngineController::Status::Ready ||
                       engine_->status() == EngineController::Status::Generating;
    const std::shared_ptr<const ember::Model> model = ready ? engine_->model_handle() : nullptr;
    // The level the chat runs, which may be another than the model was loaded with.
    const double sparsity = model ? engine_->activation_sparsity() : 0.0;
    if (model == served_model_ && sparsity == served_sparsity_) return;
    served_model_ = model;
    served_sparsity_ = sparsity;
    if (!model) return server_->serve(nullptr, {});
    // The context the user chose for the chat: its KV cache, allocated in full beside the chat's,
    // costs what the context setting says.
    ember::SessionParams sp;
    sp.n_ctx = engine_->context_size() > 0 ? engine_->context_size() : 0;
    if (sparsity > 0.0) sp.activation_sparsity = float(sparsity);
    auto queue = server::GenerationQueue::create(model, sp);
    if (!queue) {
        error_ = tr("The model cannot be served: %1").arg(QString::fromStdString(queue.error().message));
        server_->serve(nullptr, {});
        emit changed();
        return;
    }
    server_->serve(std::move(*queue), QFileInfo(engine_->model_path()).fileName().toStdString());
}

void ServeController::add_request(const server::RequestRecord& record) {
    if (settings_->serve_keeps_chats()) keep_chat(record);
    ++request_count_;
    recent_.prepend(describe(record));
    while (recent_.size() > kRecent) recent_.removeLast();
    emit requestsChanged();
}

void ServeController::keep_chat(const server::RequestRecord& r) {
    if (!history_ || r.messages.empty() || !r.error.empty()) return;
    store::ChatOptions options;
    options.modelPath = engine_->model_path();
    QList<QPair<store::Role, QString>> turns;
    QString title;
    for (const chat::Message& m : r.messages) {
        const QString text = QString::fromStdString(m.content);
        if (m.role == "system") options.systemPrompt += text;
        else turns.append({m.role == "user" ? store::Role::User : store::Role::Assistant, text});
        if (title.isEmpty() && m.role == "user") title = text.simplified().left(60);
    }
    turns.append({store::Role::Assistant, QString::fromStdString(r.answer)});
    history_->add_chat(tr("API: %1").arg(title), options, turns);
}

}  // namespace ember::app

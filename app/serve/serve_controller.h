#pragma once
// The "Serve" switch: the OpenAI-compatible API (server/) on localhost over the model the chat
// uses, sharing its weights (the server has a session of its own, so API requests never enter
// the chat or its history). Follows the engine: a new model is served as soon as it is loaded,
// and nothing is served while a model loads, so the old one can be freed first.

#include <QObject>
#include <QStringList>
#include <QtQml/qqmlregistration.h>

#include <memory>

#include "ember/model.h"

class QQmlEngine;
class QJSEngine;

namespace ember::server {
class ApiServer;
struct RequestRecord;
}

namespace ember::app {

class AppSettings;
class EngineController;
class HistoryController;

class ServeController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

    Q_PROPERTY(bool serving READ serving NOTIFY changed)
    // Where clients point: "http://127.0.0.1:PORT/v1"; empty when not serving.
    Q_PROPERTY(QString url READ url NOTIFY changed)
    // Why the server could not start (the port in use…); empty otherwise.
    Q_PROPERTY(QString error READ error NOTIFY changed)
    Q_PROPERTY(int requestCount READ request_count NOTIFY requestsChanged)
    // One line per finished request, newest first (at most kRecent).
    Q_PROPERTY(QStringList recentRequests READ recent_requests NOTIFY requestsChanged)

public:
    static constexpr int kRecent = 20;

    // history: where chats from the API go when AppSettings.serveKeepsChats is on (may be null).
    ServeController(EngineController* engine, AppSettings* settings, HistoryController* history,
                    QObject* parent = nullptr);
    ~ServeController() override;

    static ServeController* create(QQmlEngine*, QJSEngine*);
    static void set_instance(ServeController* controller);

    bool serving() const { return server_ != nullptr; }
    QString url() const;
    QString error() const { return error_; }
    int request_count() const { return request_count_; }
    QStringList recent_requests() const { return recent_; }

    // Listens on 127.0.0.1 at AppSettings.servePort, with AppSettings.serveApiKey when set.
    Q_INVOKABLE void start();
    Q_INVOKABLE void stop();
    Q_INVOKABLE void copyUrl() const;

signals:
    void changed();
    void requestsChanged();

private:
    void follow_engine();  // serve the engine's model, or nothing while it loads
    void add_request(const server::RequestRecord& record);
    void keep_chat(const server::RequestRecord& record);

    EngineController* engine_;
    AppSettings* settings_;
    HistoryController* history_;
    std::unique_ptr<server::ApiServer> server_;
    std::shared_ptr<const ember::Model> served_model_;
    double served_sparsity_ = 0.0;  // the activation sparsity the served sessions run
    QString error_;
    int request_count_ = 0;
    QStringList recent_;
};

}  // namespace ember::app

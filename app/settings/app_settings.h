#pragma once
// The app's own preferences (theme, text size, window geometry, GPU use, …), kept in
// <data dir>/settings.json.
// Written whenever one changes, atomically; a missing or unreadable file means the defaults, and
// an unreadable one is left in place for the user to look at (it is replaced on the next change).

#include <QHash>
#include <QObject>
#include <QRect>
#include <QString>
#include <QStringList>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>

class QQmlEngine;
class QJSEngine;

namespace ember::app {

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON

    // "system" (the platform's colours), "light" or "dark".
    Q_PROPERTY(QString theme READ theme WRITE set_theme NOTIFY changed)
    // Scales every font of the window: 0.8 … 1.6.
    Q_PROPERTY(double fontScale READ font_scale WRITE set_font_scale NOTIFY changed)
    // The main window's last position and size; an empty rect before the first close.
    Q_PROPERTY(QRect windowGeometry READ window_geometry WRITE set_window_geometry NOTIFY changed)
    // The first-run screen has been seen and closed.
    Q_PROPERTY(bool welcomed READ welcomed WRITE set_welcomed NOTIFY changed)
    // Sparse models may put their hot neurons on a GPU; off: never, the user's choice.
    Q_PROPERTY(bool useGpu READ use_gpu WRITE set_use_gpu NOTIFY changed)
    // The API server's port on localhost (the Serve switch) and the key clients must send; empty: none.
    Q_PROPERTY(int servePort READ serve_port WRITE set_serve_port NOTIFY changed)
    Q_PROPERTY(QString serveApiKey READ serve_api_key WRITE set_serve_api_key NOTIFY changed)
    // Chats that come through the API are kept in the history too (off: they never appear there).
    Q_PROPERTY(bool serveKeepsChats READ serve_keeps_chats WRITE set_serve_keeps_chats NOTIFY changed)

public:
    explicit AppSettings(const QString& path, QObject* parent = nullptr);

    static AppSettings* create(QQmlEngine*, QJSEngine*);
    static void set_instance(AppSettings* settings);

    QString theme() const { return theme_; }
    void set_theme(const QString& theme);
    double font_scale() const { return font_scale_; }
    void set_font_scale(double scale);
    QRect window_geometry() const { return geometry_; }
    void set_window_geometry(const QRect& rect);
    bool welcomed() const { return welcomed_; }
    void set_welcomed(bool welcomed);
    bool use_gpu() const { return use_gpu_; }
    void set_use_gpu(bool use);
    int serve_port() const { return serve_port_; }
    void set_serve_port(int port);
    QString serve_api_key() const { return serve_api_key_; }
    void set_serve_api_key(const QString& key);
    bool serve_keeps_chats() const { return serve_keeps_chats_; }
    void set_serve_keeps_chats(bool keep);
    // The last chat open when the app closed (closing on a new, empty chat keeps it); 0: none yet.
    qint64 last_chat() const { return last_chat_; }
    void set_last_chat(qint64 id);
    // The prompt format the user chose for a model (by path); empty: detect it from the model.
    QString prompt_format_for(const QString& model) const { return prompt_formats_.value(model); }
    void set_prompt_format_for(const QString& model, const QString& format);
    // The system prompt a new chat with the model starts with (by path); empty: none.
    QString system_prompt_for(const QString& model) const { return system_prompts_.value(model); }
    void set_system_prompt_for(const QString& model, const QString& prompt);
    // The model loaded last (its path), loaded again at start; empty: none yet.
    QString last_model() const { return last_model_; }
    void set_last_model(const QString& path);
    // The VRAM budget the user set for a model (by path), in bytes; a model without one gets the
    // app's default.
    QVariantMap budgets() const { return budgets_; }
    void set_budget_for(const QString& model, double bytes);
    // The activation sparsity chosen for a model (by path): level 0 (off) is not kept.
    QVariantMap activation_sparsities() const { return activation_sparsity_; }
    void set_activation_sparsity_for(const QString& model, double level);
    // Models whose activation sparsity the user stopped measuring: not measured on their own again.
    QStringList calibrations_declined() const { return calibrations_declined_; }
    void set_calibrations_declined(const QStringList& models);
    // Folders of GGUF files the user added to the library in place (not copied).
    QStringList library_folders() const { return library_folders_; }
    void add_library_folder(const QString& folder);
    void remove_library_folder(const QString& folder);

    // Why the file could not be read or written, if it could not.
    QString error() const { return error_; }

signals:
    void changed();

private:
    void save();

    QString path_;
    QString theme_ = QStringLiteral("system");
    double font_scale_ = 1.0;
    QRect geometry_;
    bool welcomed_ = false;
    bool use_gpu_ = true;
    int serve_port_ = 8080;
    QString serve_api_key_;
    bool serve_keeps_chats_ = false;
    qint64 last_chat_ = 0;
    QString last_model_;
    QVariantMap budgets_;                      // model path -> VRAM budget in bytes
    QHash<QString, QString> prompt_formats_;  // model path -> prompt format name
    QHash<QString, QString> system_prompts_;  // model path -> default system prompt
    QVariantMap activation_sparsity_;          // model path -> level
    QStringList calibrations_declined_;        // model paths
    QStringList library_folders_;
    QString error_;
};

}  // namespace ember::app

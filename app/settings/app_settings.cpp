#include "app/settings/app_settings.h"

#include <QFile>
#include <QJSEngine>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <algorithm>

namespace ember::app {
namespace {

AppSettings* g_instance = nullptr;

bool valid_theme(const QString& t) {
    return t == QLatin1String("system") || t == QLatin1String("light") || t == QLatin1String("dark");
}

}  // namespace

AppSettings::AppSettings(const QString& path, QObject* parent) : QObject(parent), path_(path) {
    QFile file(path_);
    if (!file.exists()) return;
    if (!file.open(QIODevice::ReadOnly)) {
        error_ = QStringLiteral("%1: %2").arg(path_, file.errorString());
        return;
    }
    QJsonParseError parse{};
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parse);
    if (!doc.isObject()) {
        error_ = QStringLiteral("%1: not a JSON object (%2); using the defaults").arg(path_, parse.errorString());
        return;
    }
    const QJsonObject o = doc.object();
    if (const QString t = o.value(QStringLiteral("theme")).toString(); valid_theme(t)) theme_ = t;
    if (const QJsonValue s = o.value(QStringLiteral("fontScale")); s.isDouble()) font_scale_ = std::clamp(s.toDouble(), 0.8, 1.6);
    welcomed_ = o.value(QStringLiteral("welcomed")).toBool();
    use_gpu_ = o.value(QStringLiteral("useGpu")).toBool(true);
    if (const int port = o.value(QStringLiteral("servePort")).toInt(); port >= 1 && port <= 65535) serve_port_ = port;
    serve_api_key_ = o.value(QStringLiteral("serveApiKey")).toString();
    serve_keeps_chats_ = o.value(QStringLiteral("serveKeepsChats")).toBool();
    if (const QJsonValue c = o.value(QStringLiteral("lastChat")); c.isDouble() && c.toDouble() > 0) last_chat_ = qint64(c.toDouble());
    last_model_ = o.value(QStringLiteral("lastModel")).toString();
    const QJsonObject budgets = o.value(QStringLiteral("budgets")).toObject();
    for (auto it = budgets.begin(); it != budgets.end(); ++it)
        if (const double b = it.value().toDouble(); b > 0.0) budgets_.insert(it.key(), b);
    const QJsonObject formats = o.value(QStringLiteral("promptFormats")).toObject();
    for (auto it = formats.begin(); it != formats.end(); ++it)
        if (it.value().isString() && !it.value().toString().isEmpty()) prompt_formats_.insert(it.key(), it.value().toString());
    const QJsonObject sparsity = o.value(QStringLiteral("activationSparsity")).toObject();
    for (auto it = sparsity.begin(); it != sparsity.end(); ++it)
        if (const double v = it.value().toDouble(); v > 0.0 && v <= 0.95) activation_sparsity_.insert(it.key(), v);
    for (const QJsonValue& m : o.value(QStringLiteral("calibrationsDeclined")).toArray())
        if (m.isString() && !m.toString().isEmpty() && !calibrations_declined_.contains(m.toString()))
            calibrations_declined_.push_back(m.toString());
    const QJsonObject prompts = o.value(QStringLiteral("systemPrompts")).toObject();
    for (auto it = prompts.begin(); it != prompts.end(); ++it)
        if (it.value().isString() && !it.value().toString().isEmpty()) system_prompts_.insert(it.key(), it.value().toString());
    for (const QJsonValue& f : o.value(QStringLiteral("libraryFolders")).toArray())
        if (f.isString() && !f.toString().isEmpty() && !library_folders_.contains(f.toString())) library_folders_.push_back(f.toString());
    const QJsonObject g = o.value(QStringLiteral("window")).toObject();
    const QRect rect(g.value(QStringLiteral("x")).toInt(), g.value(QStringLiteral("y")).toInt(),
                     g.value(QStringLiteral("width")).toInt(), g.value(QStringLiteral("height")).toInt());
    if (rect.width() >= 200 && rect.height() >= 150) geometry_ = rect;
}

AppSettings* AppSettings::create(QQmlEngine*, QJSEngine*) {
    Q_ASSERT(g_instance);
    QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
    return g_instance;
}

void AppSettings::set_instance(AppSettings* settings) { g_instance = settings; }

void AppSettings::set_theme(const QString& theme) {
    if (!valid_theme(theme) || theme == theme_) return;
    theme_ = theme;
    save();
    emit changed();
}

void AppSettings::set_font_scale(double scale) {
    scale = std::clamp(scale, 0.8, 1.6);
    if (qFuzzyCompare(scale, font_scale_)) return;
    font_scale_ = scale;
    save();
    emit changed();
}

void AppSettings::set_window_geometry(const QRect& rect) {
    if (rect == geometry_ || rect.width() < 200 || rect.height() < 150) return;
    geometry_ = rect;
    save();
    emit changed();
}

void AppSettings::set_welcomed(bool welcomed) {
    if (welcomed == welcomed_) return;
    welcomed_ = welcomed;
    save();
    emit changed();
}

void AppSettings::set_serve_port(int port) {
    if (port < 1 || port > 65535 || port == serve_port_) return;
    serve_port_ = port;
    save();
    emit changed();
}

void AppSettings::set_serve_api_key(const QString& key) {
    if (key == serve_api_key_) return;
    serve_api_key_ = key;
    save();
    emit changed();
}

void AppSettings::set_serve_keeps_chats(bool keep) {
    if (keep == serve_keeps_chats_) return;
    serve_keeps_chats_ = keep;
    save();
    emit changed();
}

void AppSettings::set_use_gpu(bool use) {
    if (use == use_gpu_) return;
    use_gpu_ = use;
    save();
    emit changed();
}

void AppSettings::set_last_chat(qint64 id) {
    if (id == last_chat_) return;
    last_chat_ = id;
    save();
}

void AppSettings::set_last_model(const QString& path) {
    if (path == last_model_) return;
    last_model_ = path;
    save();
}

void AppSettings::set_budget_for(const QString& model, double bytes) {
    if (budgets_.value(model, 0.0).toDouble() == bytes) return;
    if (bytes > 0.0) budgets_.insert(model, bytes);
    else budgets_.remove(model);
    save();
}

void AppSettings::set_prompt_format_for(const QString& model, const QString& format) {
    if (prompt_format_for(model) == format) return;
    if (format.isEmpty()) prompt_formats_.remove(model);
    else prompt_formats_.insert(model, format);
    save();
    emit changed();
}

void AppSettings::set_system_prompt_for(const QString& model, const QString& prompt) {
    if (system_prompt_for(model) == prompt) return;
    if (prompt.isEmpty()) system_prompts_.remove(model);
    else system_prompts_.insert(model, prompt);
    save();
    emit changed();
}

void AppSettings::set_activation_sparsity_for(const QString& model, double level) {
    if (activation_sparsity_.value(model, 0.0).toDouble() == level) return;
    if (level > 0.0) activation_sparsity_.insert(model, level);
    else activation_sparsity_.remove(model);
    save();
    emit changed();
}

void AppSettings::set_calibrations_declined(const QStringList& models) {
    if (models == calibrations_declined_) return;
    calibrations_declined_ = models;
    save();
    emit changed();
}

void AppSettings::add_library_folder(const QString& folder) {
    if (folder.isEmpty() || library_folders_.contains(folder)) return;
    library_folders_.push_back(folder);
    save();
    emit changed();
}

void AppSettings::remove_library_folder(const QString& folder) {
    if (library_folders_.removeAll(folder) == 0) return;
    save();
    emit changed();
}

void AppSettings::save() {
    QJsonObject o{{"theme", theme_}, {"fontScale", font_scale_}, {"welcomed", welcomed_}, {"useGpu", use_gpu_}, {"servePort", serve_port_},
                  {"serveKeepsChats", serve_keeps_chats_}};
    if (!serve_api_key_.isEmpty()) o.insert(QStringLiteral("serveApiKey"), serve_api_key_);
    if (last_chat_ > 0) o.insert(QStringLiteral("lastChat"), double(last_chat_));
    if (!last_model_.isEmpty()) o.insert(QStringLiteral("lastModel"), last_model_);
    if (!budgets_.isEmpty()) o.insert(QStringLiteral("budgets"), QJsonObject::fromVariantMap(budgets_));
    if (!prompt_formats_.isEmpty()) {
        QJsonObject formats;
        for (auto it = prompt_formats_.begin(); it != prompt_formats_.end(); ++it) formats.insert(it.key(), it.value());
        o.insert(QStringLiteral("promptFormats"), formats);
    }
    if (!system_prompts_.isEmpty()) {
        QJsonObject prompts;
        for (auto it = system_prompts_.begin(); it != system_prompts_.end(); ++it) prompts.insert(it.key(), it.value());
        o.insert(QStringLiteral("systemPrompts"), prompts);
    }
    if (!activation_sparsity_.isEmpty()) o.insert(QStringLiteral("activationSparsity"), QJsonObject::fromVariantMap(activation_sparsity_));
    if (!library_folders_.isEmpty()) o.insert(QStringLiteral("libraryFolders"), QJsonArray::fromStringList(library_folders_));
    if (!calibrations_declined_.isEmpty())
        o.insert(QStringLiteral("calibrationsDeclined"), QJsonArray::fromStringList(calibrations_declined_));
    if (geometry_.isValid())
        o.insert(QStringLiteral("window"), QJsonObject{{"x", geometry_.x()},
                                                       {"y", geometry_.y()},
                                                       {"width", geometry_.width()},
                                                       {"height", geometry_.height()}});
    QSaveFile file(path_);
    if (!file.open(QIODevice::WriteOnly) || file.write(QJsonDocument(o).toJson()) < 0 || !file.commit()) {
        error_ = QStringLiteral("%1: %2").arg(path_, file.errorString());
        qWarning("settings not saved: %s", qPrintable(error_));
        return;
    }
    error_.clear();
}

}  // namespace ember::app

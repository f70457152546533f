#include "app/hub/download_queue.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <optional>

namespace ember::app {
namespace {

QJsonObject to_json(const SavedDownload& d) {
    QJsonArray files;
    for (const hub::FileEntry& f : d.job.files) {
        files.append(QJsonObject{{"path", QString::fromStdString(f.path)},
                                 {"size", double(f.size)},
                                 {"oid", QString::fromStdString(f.oid)},
                                 {"lfsSha256", QString::fromStdString(f.lfs_sha256)}});
    }
    return QJsonObject{{"model", d.model},
                       {"repo", QString::fromStdString(d.job.repo)},
                       {"revision", QString::fromStdString(d.job.revision)},
                       {"modelsDir", QString::fromStdString(d.job.models_dir.string())},
                       {"paused", d.paused},
                       {"files", files}};
}

// One entry, or an empty optional and *why naming the field.
std::optional<SavedDownload> from_json(const QJsonValue& value, QString* why) {
    const QJsonObject o = value.toObject();
    auto text = [&](const char* key) -> std::optional<QString> {
        const QJsonValue v = o.value(QLatin1String(key));
        if (!v.isString() || v.toString().isEmpty()) {
            *why = QStringLiteral("\"%1\" is missing or not a string").arg(QLatin1String(key));
            return std::nullopt;
        }
        return v.toString();
    };
    SavedDownload d;
    const auto model = text("model");
    if (!model) return std::nullopt;
    const auto repo = text("repo");
    if (!repo) return std::nullopt;
    const auto revision = text("revision");
    if (!revision) return std::nullopt;
    const auto dir = text("modelsDir");
    if (!dir) return std::nullopt;
    d.model = *model;
    d.job.repo = repo->toStdString();
    d.job.revision = revision->toStdString();
    d.job.models_dir = dir->toStdString();
    d.paused = o.value(QLatin1String("paused")).toBool();
    const QJsonValue files = o.value(QLatin1String("files"));
    if (!files.isArray() || files.toArray().isEmpty()) {
        *why = QStringLiteral("\"files\" is missing or empty");
        return std::nullopt;
    }
    for (const QJsonValue& fv : files.toArray()) {
        const QJsonObject f = fv.toObject();
        const QJsonValue size = f.value(QLatin1String("size"));
        if (!f.value(QLatin1String("path")).isString() || !size.isDouble() || size.toDouble() < 0) {
            *why = QStringLiteral("a file has no \"path\" or no \"size\"");
            return std::nullopt;
        }
        d.job.files.push_back({f.value(QLatin1String("path")).toString().toStdString(), uint64_t(size.toDouble()),
                               f.value(QLatin1String("oid")).toString().toStdString(),
                               f.value(QLatin1String("lfsSha256")).toString().toStdString()});
    }
    return d;
}

}  // namespace

std::vector<SavedDownload> read_download_queue(const QString& path, QString* error) {
    QFile file(path);
    if (!file.exists()) return {};
    if (!file.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: %2").arg(path, file.errorString());
        return {};
    }
    QJsonParseError parse{};
    const QJsonDocument doc = QJsonDocument::fromJson(file.readAll(), &parse);
    const QJsonValue list = doc.object().value(QLatin1String("downloads"));
    if (!doc.isObject() || !list.isArray()) {
        *error = QStringLiteral("%1: not a list of downloads (%2)")
                     .arg(path, parse.error == QJsonParseError::NoError ? QStringLiteral("no \"downloads\" array")
                                                                        : parse.errorString());
        return {};
    }
    std::vector<SavedDownload> out;
    for (qsizetype i = 0; i < list.toArray().size(); ++i) {
        QString why;
        auto d = from_json(list.toArray().at(i), &why);
        if (!d) {
            *error = QStringLiteral("%1: download %2: %3").arg(path).arg(i + 1).arg(why);
            return {};
        }
        out.push_back(std::move(*d));
    }
    return out;
}

bool write_download_queue(const QString& path, const std::vector<SavedDownload>& downloads, QString* error) {
    QJsonArray list;
    for (const SavedDownload& d : downloads) list.append(to_json(d));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(QJsonDocument(QJsonObject{{"downloads", list}}).toJson()) < 0 || !file.commit()) {
        *error = QStringLiteral("cannot save the downloads to %1: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

}  // namespace ember::app

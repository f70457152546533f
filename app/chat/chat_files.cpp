#include "app/chat/chat_files.h"

#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QSaveFile>

#include "app/store/chat_store.h"

namespace ember::app {

namespace {
// An export of years of chats is a few MB; anything far larger is not one, and is not read
// into memory whole.
constexpr qint64 kMaxImportBytes = 256ll << 20;
}  // namespace

store::Result<QString> export_chats_to_file(store::ChatStore& store, const QString& path, std::optional<qint64> chat_id) {
    const bool json = QFileInfo(path).suffix().compare(QLatin1String("json"), Qt::CaseInsensitive) == 0;
    auto bytes = store.exportChats(json ? store::ExportFormat::Json : store::ExportFormat::Markdown, chat_id);
    if (!bytes) return store::Failure{bytes.error()};
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return store::Failure{QObject::tr("cannot write %1: %2").arg(path, file.errorString())};
    if (file.write(bytes.value()) != bytes.value().size() || !file.commit())
        return store::Failure{QObject::tr("cannot write %1: %2").arg(path, file.errorString())};
    const QString what = json ? QObject::tr("JSON") : QObject::tr("Markdown");
    if (chat_id) return QObject::tr("the chat as %1").arg(what);
    // The same connection and thread as the export: the chats it wrote.
    auto chats = store.listChats();
    if (!chats) return QObject::tr("the chats as %1").arg(what);
    const qsizetype n = chats.value().size();
    return n == 1 ? QObject::tr("1 chat as %1").arg(what) : QObject::tr("%1 chats as %2").arg(n).arg(what);
}

store::Result<QList<qint64>> import_chats_from_file(store::ChatStore& store, const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return store::Failure{QObject::tr("cannot read %1: %2").arg(path, file.errorString())};
    if (file.size() > kMaxImportBytes)
        return store::Failure{QObject::tr("%1 is %2 MB; a chat export is far smaller").arg(path).arg(file.size() >> 20)};
    const QByteArray bytes = file.readAll();
    if (file.error() != QFileDevice::NoError)
        return store::Failure{QObject::tr("cannot read %1: %2").arg(path, file.errorString())};
    auto ids = store.importJson(bytes);
    if (!ids) return store::Failure{QObject::tr("%1: %2").arg(path, ids.error())};
    return ids;
}

}  // namespace ember::app

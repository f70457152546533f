#include "app/tray/tray_status.h"

#include <QAbstractItemModel>
#include <QCoreApplication>
#include <QStringList>

#include "app/hub/download_list_model.h"

namespace ember::app {

QString tray_status(bool generating, const QAbstractItemModel& downloads) {
    int running = 0;
    double done = 0, total = 0;
    for (int r = 0; r < downloads.rowCount(); ++r) {
        const QModelIndex i = downloads.index(r, 0);
        if (i.data(DownloadListModel::StateRole).toString() != QLatin1String("running")) continue;
        ++running;
        done += i.data(DownloadListModel::BytesDoneRole).toDouble();
        total += i.data(DownloadListModel::BytesTotalRole).toDouble();
    }
    QStringList parts;
    if (generating) parts << QCoreApplication::translate("Tray", "Generating an answer");
    if (running > 0) {
        const QString share = total > 0 ? QStringLiteral(", %1 %").arg(int(100.0 * done / total)) : QString();
        parts << (running == 1 ? QCoreApplication::translate("Tray", "downloading a model%1").arg(share)
                               : QCoreApplication::translate("Tray", "downloading %1 models%2").arg(running).arg(share));
    }
    if (parts.isEmpty()) return QCoreApplication::translate("Tray", "Ready");
    parts.front()[0] = parts.front()[0].toUpper();
    return parts.join(QStringLiteral(" · "));
}

}  // namespace ember::app

#pragma once
// The line the system-tray icon shows: what Ember is doing while its window may be hidden.

#include <QString>

class QAbstractItemModel;

namespace ember::app {

// "Generating an answer · downloading 2 models, 45 %", "Ready"; from the chat's state and the
// download list (DownloadListModel's roles).
QString tray_status(bool generating, const QAbstractItemModel& downloads);

}  // namespace ember::app

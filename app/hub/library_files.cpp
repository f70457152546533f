#include "app/hub/library_files.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

namespace ember::app {

QString copy_model_with_statistics(const QString& model, const QString& dir) {
    const QString copy = dir + "/" + QFileInfo(model).fileName();
    if (!QDir().mkpath(dir) || !QFile::copy(model, copy)) return {};
    const QString stats = QFileInfo(model).absolutePath() + "/activation";
    const QStringList files = QDir(stats).entryList(QDir::Files);
    if (!files.isEmpty() && !QDir().mkpath(dir + "/activation")) return {};
    for (const QString& f : files)
        if (!QFile::copy(stats + "/" + f, dir + "/activation/" + f)) return {};
    return copy;
}

}  // namespace ember::app

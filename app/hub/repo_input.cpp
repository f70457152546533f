#include "app/hub/repo_input.h"

#include <QStringList>
#include <QUrl>

#include "ember/hub/client.h"

namespace ember::app {

QString repo_from_input(const QString& text) {
    QString path = text.trimmed();
    // A URL, with or without its scheme: only the path after the host names the repo.
    const QUrl url = QUrl::fromUserInput(path);
    if (path.contains(QStringLiteral("://")) || path.startsWith(QStringLiteral("huggingface.co/")) ||
        path.startsWith(QStringLiteral("hf.co/")))
        path = url.path();
    const QStringList parts = path.split(QLatin1Char('/'), Qt::SkipEmptyParts);
    if (parts.size() < 2) return {};
    const QString repo = parts[0] + QLatin1Char('/') + parts[1];
    return hub::check_repo_id(repo.toStdString()) ? repo : QString();
}

}  // namespace ember::app

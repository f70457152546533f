#include "app/store/search_query.h"

#include <QStringList>

#include <algorithm>

namespace ember::store {

QString ftsMatchExpression(const QString& text) {
    QStringList phrases;
    for (QString word : text.simplified().split(QLatin1Char(' '), Qt::SkipEmptyParts)) {
        if (std::none_of(word.cbegin(), word.cend(), [](QChar c) { return c.isLetterOrNumber(); }))
            continue;
        phrases.append(QLatin1Char('"') + word.replace(QLatin1Char('"'), QLatin1String("\"\"")) + QLatin1Char('"'));
    }
    if (!phrases.isEmpty() && !text.isEmpty() && !text.back().isSpace())
        phrases.last() += QLatin1Char('*');
    return phrases.join(QLatin1Char(' '));
}

}  // namespace ember::store

#pragma once
// The Ctrl+K results: one row per matching message, its snippet ready for a StyledText label.

#include <QAbstractListModel>
#include <QList>
#include <QtQml/qqmlregistration.h>

#include "app/store/chat_types.h"

namespace ember::app {

// The snippet as rich text: the message text escaped first, so what the user wrote is never
// read as markup, then the store's match markers turned into bold.
QString snippet_html(const QString& snippet);

class SearchHitModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ChatController")

public:
    enum Role { ChatIdRole = Qt::UserRole + 1, MessageIdRole, ChatTitleRole, SnippetRole };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    const QList<store::SearchHit>& hits() const { return hits_; }
    // Each query's results replace the last ones: rows removed, then the new ones inserted.
    void set_hits(QList<store::SearchHit> hits);

private:
    QList<store::SearchHit> hits_;
};

}  // namespace ember::app

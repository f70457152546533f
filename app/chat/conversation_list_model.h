#pragma once
// The chats of the sidebar, in ChatStore::listChats() order (pinned, then newest), each with its
// date heading. sync() turns the shown list into a fresh listing with row-precise inserts,
// removes, moves and dataChanged, so the view keeps its scroll position and selection.

#include <QAbstractListModel>
#include <QDateTime>
#include <QList>
#include <QtQml/qqmlregistration.h>

#include "app/store/chat_types.h"

namespace ember::app {

struct ConversationRow {
    qint64 id = 0;
    QString title;
    QString section;  // chatListSection(): "Pinned", "Today", …
    bool pinned = false;
    friend bool operator==(const ConversationRow&, const ConversationRow&) = default;
};

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ChatController")

public:
    enum Role { ChatIdRole = Qt::UserRole + 1, TitleRole, SectionRole, PinnedRole };
    Q_ENUM(Role)

    using QAbstractListModel::QAbstractListModel;

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    const QList<ConversationRow>& rows() const { return rows_; }
    // `now` decides the date headings.
    void sync(const QList<store::Chat>& chats, const QDateTime& now);

private:
    qsizetype find(qint64 id, qsizetype from) const;

    QList<ConversationRow> rows_;
};

}  // namespace ember::app

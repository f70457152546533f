#include "app/chat/conversation_list_model.h"

#include <QSet>

#include "app/chat/chat_sections.h"

namespace ember::app {

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const ConversationRow& r = rows_[index.row()];
    switch (role) {
        case ChatIdRole: return r.id;
        case Qt::DisplayRole:
        case TitleRole: return r.title;
        case SectionRole: return r.section;
        case PinnedRole: return r.pinned;
        default: return {};
    }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{ChatIdRole, "chatId"}, {TitleRole, "title"}, {SectionRole, "section"}, {PinnedRole, "pinned"},
            {Qt::DisplayRole, "display"}};
}

qsizetype ConversationListModel::find(qint64 id, qsizetype from) const {
    for (qsizetype i = from; i < rows_.size(); ++i)
        if (rows_[i].id == id) return i;
    return -1;
}

void ConversationListModel::sync(const QList<store::Chat>& chats, const QDateTime& now) {
    // Gone chats first, bottom up, so the rows above keep their numbers.
    QSet<qint64> wanted;
    for (const store::Chat& c : chats) wanted.insert(c.id);
    for (qsizetype i = rows_.size() - 1; i >= 0; --i) {
        if (wanted.contains(rows_[i].id)) continue;
        beginRemoveRows({}, int(i), int(i));
        rows_.removeAt(i);
        endRemoveRows();
    }
    // Then row by row: the wanted chat is here already, further down (move it up), or new.
    for (qsizetype i = 0; i < chats.size(); ++i) {
        const store::Chat& c = chats[i];
        const ConversationRow row{c.id, c.title, chat_list_section(c, now), c.pinned};
        const qsizetype at = find(c.id, i);
        if (at < 0) {
            beginInsertRows({}, int(i), int(i));
            rows_.insert(i, row);
            endInsertRows();
            continue;
        }
        if (at != i) {
            beginMoveRows({}, int(at), int(at), {}, int(i));
            rows_.move(at, i);
            endMoveRows();
        }
        if (rows_[i] != row) {
            rows_[i] = row;
            emit dataChanged(index(int(i)), index(int(i)), {TitleRole, Qt::DisplayRole, SectionRole, PinnedRole});
        }
    }
}

}  // namespace ember::app

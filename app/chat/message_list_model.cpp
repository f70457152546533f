#include "app/chat/message_list_model.h"

#include <algorithm>

namespace ember::app {

int MessageListModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : int(messages_.size()); }

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) return {};
    const ChatMessage& m = messages_[index.row()];
    switch (role) {
        case RoleRole: return m.role;
        case Qt::DisplayRole:
        case ContentRole: return m.content;
        case GeneratingRole: return m.generating;
        case StatsRole: return m.stats;
        case SiblingIndexRole: return m.sibling_index;
        case SiblingCountRole: return m.sibling_count;
        default: return {};
    }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{RoleRole, "role"}, {ContentRole, "content"}, {GeneratingRole, "generating"}, {StatsRole, "stats"},
            {SiblingIndexRole, "siblingIndex"}, {SiblingCountRole, "siblingCount"}, {Qt::DisplayRole, "display"}};
}

void MessageListModel::append(const ChatMessage& message) {
    beginInsertRows({}, int(messages_.size()), int(messages_.size()));
    messages_.push_back(message);
    endInsertRows();
}

void MessageListModel::append_to_last(const QString& text) {
    if (messages_.isEmpty() || text.isEmpty()) return;
    messages_.back().content += text;
    const QModelIndex last = index(int(messages_.size()) - 1);
    emit dataChanged(last, last, {ContentRole, Qt::DisplayRole});
}

void MessageListModel::finish_last(const QString& stats) {
    if (messages_.isEmpty()) return;
    messages_.back().generating = false;
    messages_.back().stats = stats;
    const QModelIndex last = index(int(messages_.size()) - 1);
    emit dataChanged(last, last, {GeneratingRole, StatsRole});
}

void MessageListModel::remove_last() {
    if (messages_.isEmpty()) return;
    beginRemoveRows({}, int(messages_.size()) - 1, int(messages_.size()) - 1);
    messages_.pop_back();
    endRemoveRows();
}

void MessageListModel::set_last_id(qint64 id) {
    if (!messages_.isEmpty()) messages_.back().id = id;
}

void MessageListModel::set_last_siblings(int index, int count) {
    if (messages_.isEmpty()) return;
    messages_.back().sibling_index = index;
    messages_.back().sibling_count = count;
    const QModelIndex last = this->index(int(messages_.size()) - 1);
    emit dataChanged(last, last, {SiblingIndexRole, SiblingCountRole});
}

void MessageListModel::replace_from(int row, QVector<ChatMessage> tail) {
    row = std::clamp(row, 0, int(messages_.size()));
    if (row < messages_.size()) {
        beginRemoveRows({}, row, int(messages_.size()) - 1);
        messages_.resize(row);
        endRemoveRows();
    }
    if (tail.isEmpty()) return;
    beginInsertRows({}, row, row + int(tail.size()) - 1);
    messages_.append(std::move(tail));
    endInsertRows();
}

}  // namespace ember::app

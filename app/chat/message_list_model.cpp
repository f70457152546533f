#include "app/chat/message_list_model.h"

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
        default: return {};
    }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{RoleRole, "role"}, {ContentRole, "content"}, {GeneratingRole, "generating"}, {StatsRole, "stats"},
            {Qt::DisplayRole, "display"}};
}

void MessageListModel::set_messages(QVector<ChatMessage> messages) {
    beginResetModel();
    messages_ = std::move(messages);
    endResetModel();
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

}  // namespace ember::app

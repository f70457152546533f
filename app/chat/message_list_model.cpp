#include "app/chat/message_list_model.h"

#include <QVariantMap>

#include <algorithm>

namespace ember::app {
namespace {

QVariantList blocks_variant(const QVector<MessageBlock>& blocks) {
    static const QString kinds[] = {QStringLiteral("text"), QStringLiteral("code"), QStringLiteral("think")};
    QVariantList out;
    out.reserve(blocks.size());
    for (const MessageBlock& b : blocks)
        out.push_back(QVariantMap{{QStringLiteral("kind"), kinds[int(b.kind)]},
                                  {QStringLiteral("text"), b.text},
                                  {QStringLiteral("language"), b.language},
                                  {QStringLiteral("html"), b.html},
                                  {QStringLiteral("open"), b.open}});
    return out;
}

QVector<MessageBlock> split(const ChatMessage& m) { return split_blocks(m.content, 0, !m.generating); }

}  // namespace

MessageListModel::MessageListModel(QObject* parent) : QAbstractListModel(parent) {
    connect(this, &QAbstractItemModel::rowsInserted, this, &MessageListModel::countChanged);
    connect(this, &QAbstractItemModel::rowsRemoved, this, &MessageListModel::countChanged);
    connect(this, &QAbstractItemModel::modelReset, this, &MessageListModel::countChanged);
}

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
        case BlocksRole: return blocks_variant(blocks_[index.row()]);
        default: return {};
    }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{RoleRole, "role"}, {ContentRole, "content"}, {GeneratingRole, "generating"}, {StatsRole, "stats"},
            {SiblingIndexRole, "siblingIndex"}, {SiblingCountRole, "siblingCount"}, {BlocksRole, "blocks"}, {Qt::DisplayRole, "display"}};
}

void MessageListModel::append(const ChatMessage& message) {
    beginInsertRows({}, int(messages_.size()), int(messages_.size()));
    messages_.push_back(message);
    blocks_.push_back(split(message));
    endInsertRows();
}

void MessageListModel::append_to_last(const QString& text) {
    if (messages_.isEmpty() || text.isEmpty()) return;
    ChatMessage& m = messages_.back();
    m.content += text;
    extend_blocks(blocks_.back(), m.content);
    const QModelIndex last = index(int(messages_.size()) - 1);
    emit dataChanged(last, last, {ContentRole, Qt::DisplayRole, BlocksRole});
}

void MessageListModel::finish_last(const QString& stats) {
    if (messages_.isEmpty()) return;
    messages_.back().generating = false;
    messages_.back().stats = stats;
    blocks_.back() = split(messages_.back());  // once more as a finished message: a closing fence may end it
    const QModelIndex last = index(int(messages_.size()) - 1);
    emit dataChanged(last, last, {GeneratingRole, StatsRole, BlocksRole});
}

void MessageListModel::remove_last() {
    if (messages_.isEmpty()) return;
    beginRemoveRows({}, int(messages_.size()) - 1, int(messages_.size()) - 1);
    messages_.pop_back();
    blocks_.pop_back();
    endRemoveRows();
}

void MessageListModel::set_id(int row, qint64 id) {
    if (row >= 0 && row < messages_.size()) messages_[row].id = id;
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
        blocks_.resize(row);
        endRemoveRows();
    }
    if (tail.isEmpty()) return;
    beginInsertRows({}, row, row + int(tail.size()) - 1);
    for (const ChatMessage& m : tail) blocks_.push_back(split(m));
    messages_.append(std::move(tail));
    endInsertRows();
}

}  // namespace ember::app

#pragma once
// The messages of the open chat, oldest first. Streaming appends to the last row and reports
// only that row's content as changed, so a long answer costs per new piece of text, not per
// message length.

#include <QAbstractListModel>
#include <QVector>
#include <QtQml/qqmlregistration.h>

#include "app/chat/message_blocks.h"

namespace ember::app {

struct ChatMessage {
    qint64 id = 0;  // the store's row id, 0 before it is stored
    QString role;   // "user" or "assistant"
    QString content;
    bool generating = false;
    QString stats;  // "12 tokens · 30.1 tok/s · first token 80 ms · stopped"
    // Where this message is among its alternatives (edits, regenerations): ◀ 1/2 ▶.
    int sibling_index = 0;
    int sibling_count = 1;
};

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ChatController")

public:
    enum Role {
        RoleRole = Qt::UserRole + 1,
        ContentRole,
        GeneratingRole,
        StatsRole,
        SiblingIndexRole,
        SiblingCountRole,
        BlocksRole,  // [{kind: "text"|"code"|"think", text, language, html, open}]
    };
    Q_ENUM(Role)
    // How many messages the chat shows (what Regenerate needs at least one of).
    Q_PROPERTY(int count READ count NOTIFY countChanged)

    explicit MessageListModel(QObject* parent = nullptr);

    int count() const { return int(messages_.size()); }

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    const QVector<ChatMessage>& messages() const { return messages_; }
    void append(const ChatMessage& message);
    void append_to_last(const QString& text);
    void finish_last(const QString& stats);
    void remove_last();
    void set_id(int row, qint64 id);
    void set_last_siblings(int index, int count);
    // Another branch from `row` on: the rows above stay, the rest is removed and `tail` inserted.
    void replace_from(int row, QVector<ChatMessage> tail);

signals:
    void countChanged();

private:
    QVector<ChatMessage> messages_;
    QVector<QVector<MessageBlock>> blocks_;  // of each message's content, row for row
};

}  // namespace ember::app

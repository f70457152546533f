#include "app/store/store_rows.h"

#include "app/store/statement.h"
#include "app/store/store_error.h"

#include <QJsonDocument>

namespace ember::store {

std::string joinSql(std::initializer_list<std::string_view> parts) {
    std::string sql;
    for (std::string_view part : parts)
        sql += part;
    return sql;
}

Chat readChat(const Statement& row) {
    Chat chat;
    chat.id = row.columnInt(0);
    chat.title = row.columnText(1);
    chat.created = fromStoredTime(row.columnInt(2));
    chat.updated = fromStoredTime(row.columnInt(3));
    chat.pinned = row.columnInt(4) != 0;
    chat.options.systemPrompt = row.columnText(5);
    // The schema checks json_valid; an array would be valid JSON but not settings.
    const QJsonDocument settings = QJsonDocument::fromJson(row.columnText(6).toUtf8());
    if (!settings.isObject())
        throw StoreError(QStringLiteral("chat %1: settings is not a JSON object").arg(chat.id));
    chat.options.settings = settings.object();
    chat.options.modelPath = row.columnText(7);
    chat.activeLeaf = row.columnOptionalInt(8);
    return chat;
}

Message readMessage(const Statement& row) {
    Message message;
    message.id = row.columnInt(0);
    message.chatId = row.columnInt(1);
    message.parentId = row.columnOptionalInt(2);
    const QString role = row.columnText(3);
    const QString status = row.columnText(6);
    const auto parsedRole = roleFromName(role);
    const auto parsedStatus = statusFromName(status);
    if (!parsedRole || !parsedStatus)
        throw StoreError(
            QStringLiteral("message %1: unknown role '%2' or status '%3'").arg(message.id).arg(role, status));
    message.role = *parsedRole;
    message.content = row.columnText(4);
    message.created = fromStoredTime(row.columnInt(5));
    message.status = *parsedStatus;
    message.stats.ttftMs = row.columnOptionalInt(7);
    message.stats.promptTokens = row.columnOptionalInt(8);
    message.stats.promptTps = row.columnOptionalReal(9);
    message.stats.genTokens = row.columnOptionalInt(10);
    message.stats.genTps = row.columnOptionalReal(11);
    message.stats.stopReason = row.columnText(12);
    return message;
}

qint64 toStoredTime(const QDateTime& time) {
    return time.toMSecsSinceEpoch();
}

QDateTime fromStoredTime(qint64 msSinceEpoch) {
    return QDateTime::fromMSecsSinceEpoch(msSinceEpoch, Qt::UTC);
}

qint64 storedNow() {
    return QDateTime::currentMSecsSinceEpoch();
}

}  // namespace ember::store

// chatsToJson: see chat_json.h for the format.
#include "app/store/chat_json.h"

#include <QJsonArray>
#include <QJsonDocument>

namespace ember::store {
namespace {

QString timeText(const QDateTime& time) {
    return time.toUTC().toString(Qt::ISODateWithMs);
}

// Only what is known: a missing key reads back as unknown.
QJsonObject statsJson(const GenerationStats& stats) {
    QJsonObject json;
    if (stats.ttftMs)
        json.insert(QLatin1String("ttftMs"), *stats.ttftMs);
    if (stats.promptTokens)
        json.insert(QLatin1String("promptTokens"), *stats.promptTokens);
    if (stats.promptTps)
        json.insert(QLatin1String("promptTps"), *stats.promptTps);
    if (stats.genTokens)
        json.insert(QLatin1String("genTokens"), *stats.genTokens);
    if (stats.genTps)
        json.insert(QLatin1String("genTps"), *stats.genTps);
    if (!stats.stopReason.isEmpty())
        json.insert(QLatin1String("stopReason"), stats.stopReason);
    return json;
}

QJsonObject messageJson(const Message& message) {
    QJsonObject json{
        {QLatin1String("id"), message.id},
        {QLatin1String("parent"), message.parentId ? QJsonValue(*message.parentId) : QJsonValue()},
        {QLatin1String("role"), roleName(message.role)},
        {QLatin1String("content"), message.content},
        {QLatin1String("created"), timeText(message.created)},
        {QLatin1String("status"), statusName(message.status)},
    };
    if (const QJsonObject stats = statsJson(message.stats); !stats.isEmpty())
        json.insert(QLatin1String("stats"), stats);
    return json;
}

QJsonObject chatJson(const ChatRecord& record) {
    const Chat& chat = record.chat;
    QJsonArray messages;
    for (const Message& message : record.messages)
        messages.append(messageJson(message));
    return QJsonObject{
        {QLatin1String("title"), chat.title},
        {QLatin1String("created"), timeText(chat.created)},
        {QLatin1String("updated"), timeText(chat.updated)},
        {QLatin1String("pinned"), chat.pinned},
        {QLatin1String("systemPrompt"), chat.options.systemPrompt},
        {QLatin1String("settings"), chat.options.settings},
        {QLatin1String("modelPath"), chat.options.modelPath},
        {QLatin1String("activeLeaf"), chat.activeLeaf ? QJsonValue(*chat.activeLeaf) : QJsonValue()},
        {QLatin1String("messages"), messages},
    };
}

}  // namespace

QByteArray chatsToJson(const QList<ChatRecord>& records) {
    QJsonArray chats;
    for (const ChatRecord& record : records)
        chats.append(chatJson(record));
    const QJsonObject root{
        {QLatin1String("format"), QLatin1String("ember-chats")},
        {QLatin1String("version"), kChatJsonVersion},
        {QLatin1String("chats"), chats},
    };
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

}  // namespace ember::store

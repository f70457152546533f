// chatsFromJson: checks every field of an export before the store writes anything.
#include "app/store/chat_json.h"

#include "app/store/store_error.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>

#include <cmath>

namespace ember::store {
namespace {

// Largest integer a JSON number (a double) holds exactly.
constexpr double kMaxExactInteger = 9007199254740992.0;

QString describe(const QJsonValue& value) {
    constexpr qsizetype kMaxShown = 40;
    switch (value.type()) {
    case QJsonValue::Undefined:
        return QCoreApplication::translate("ChatImport", "nothing");
    case QJsonValue::Null:
        return QStringLiteral("null");
    case QJsonValue::Bool:
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Double:
        return QString::number(value.toDouble(), 'g', 17);
    case QJsonValue::String: {
        const QString text = value.toString();
        return QLatin1Char('"') + (text.size() <= kMaxShown ? text : text.left(kMaxShown) + QStringLiteral("…")) +
               QLatin1Char('"');
    }
    case QJsonValue::Array:
        return QCoreApplication::translate("ChatImport", "an array");
    case QJsonValue::Object:
        return QCoreApplication::translate("ChatImport", "an object");
    }
    Q_UNREACHABLE();
}

[[noreturn]] void failAt(const QString& path, const QString& expected, const QJsonValue& found) {
    throw StoreError(QCoreApplication::translate("ChatImport", "%1: expected %2, found %3").arg(path, expected, describe(found)));
}

// The members of one JSON object, each read as the type the format gives it; a wrong one throws
// with its path.
class Fields {
public:
    Fields(const QJsonValue& value, QString path) : m_path(std::move(path)) {
        if (!value.isObject())
            failAt(m_path.isEmpty() ? QCoreApplication::translate("ChatImport", "the file") : m_path, QCoreApplication::translate("ChatImport", "a JSON object"), value);
        m_object = value.toObject();
    }

    QString pathOf(const char* key) const {
        return m_path.isEmpty() ? QString::fromLatin1(key) : m_path + QLatin1Char('.') + QLatin1String(key);
    }
    [[noreturn]] void fail(const char* key, const QString& expected) const {
        failAt(pathOf(key), expected, m_object.value(QLatin1String(key)));
    }
    bool isAbsent(const char* key) const {
        const QJsonValue value = m_object.value(QLatin1String(key));
        return value.isUndefined() || value.isNull();
    }

    QString text(const char* key) const {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (!value.isString())
            fail(key, QCoreApplication::translate("ChatImport", "a string"));
        return value.toString();
    }
    QString optionalText(const char* key) const { return isAbsent(key) ? QString() : text(key); }

    std::optional<double> optionalNumber(const char* key) const {
        if (isAbsent(key))
            return std::nullopt;
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (!value.isDouble() || value.toDouble() < 0)
            fail(key, QCoreApplication::translate("ChatImport", "a number ≥ 0"));
        return value.toDouble();
    }
    qint64 integer(const char* key) const {
        const QJsonValue value = m_object.value(QLatin1String(key));
        const double number = value.toDouble(-1);
        if (!value.isDouble() || number < 0 || number > kMaxExactInteger || std::trunc(number) != number)
            fail(key, QCoreApplication::translate("ChatImport", "an integer ≥ 0"));
        return qint64(number);
    }
    std::optional<qint64> optionalInteger(const char* key) const {
        return isAbsent(key) ? std::nullopt : std::optional(integer(key));
    }

    bool optionalBool(const char* key) const {
        if (isAbsent(key))
            return false;
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (!value.isBool())
            fail(key, QCoreApplication::translate("ChatImport", "true or false"));
        return value.toBool();
    }
    QDateTime time(const char* key) const {
        const QDateTime time = QDateTime::fromString(text(key), Qt::ISODateWithMs);
        if (!time.isValid())
            fail(key, QCoreApplication::translate("ChatImport", "an ISO 8601 time"));
        return time.toUTC();
    }
    QJsonObject optionalObject(const char* key) const {
        if (isAbsent(key))
            return {};
        return Fields(m_object.value(QLatin1String(key)), pathOf(key)).m_object;
    }
    QJsonArray array(const char* key) const {
        const QJsonValue value = m_object.value(QLatin1String(key));
        if (!value.isArray())
            fail(key, QCoreApplication::translate("ChatImport", "an array"));
        return value.toArray();
    }

private:
    QString m_path;
    QJsonObject m_object;
};

GenerationStats readStats(const Fields& message) {
    GenerationStats stats;
    const QJsonObject object = message.optionalObject("stats");
    if (object.isEmpty())
        return stats;
    const Fields fields(object, message.pathOf("stats"));
    stats.ttftMs = fields.optionalInteger("ttftMs");
    stats.promptTokens = fields.optionalInteger("promptTokens");
    stats.promptTps = fields.optionalNumber("promptTps");
    stats.genTokens = fields.optionalInteger("genTokens");
    stats.genTps = fields.optionalNumber("genTps");
    stats.stopReason = fields.optionalText("stopReason");
    return stats;
}

// `earlier` holds the ids of the messages before this one: a parent must come before its
// children, which also rules out cycles.
Message readMessage(const QJsonValue& value, const QString& path, const QSet<qint64>& earlier) {
    const Fields fields(value, path);
    Message message;
    message.id = fields.integer("id");
    if (message.id == 0 || earlier.contains(message.id))
        fields.fail("id", QCoreApplication::translate("ChatImport", "a positive integer not used before in this chat"));
    message.parentId = fields.optionalInteger("parent");
    if (message.parentId && !earlier.contains(*message.parentId))
        fields.fail("parent", QCoreApplication::translate("ChatImport", "null or the id of an earlier message in this chat"));
    const auto role = roleFromName(fields.text("role"));
    if (!role)
        fields.fail("role", QStringLiteral("\"system\", \"user\" or \"assistant\""));
    message.role = *role;
    message.content = fields.text("content");
    message.created = fields.time("created");
    const auto status = statusFromName(fields.text("status"));
    if (!status)
        fields.fail("status", QStringLiteral("\"complete\", \"generating\" or \"interrupted\""));
    message.status = *status;
    message.stats = readStats(fields);
    return message;
}

ChatRecord readChat(const QJsonValue& value, const QString& path) {
    const Fields fields(value, path);
    ChatRecord record;
    Chat& chat = record.chat;
    chat.title = fields.text("title");
    chat.created = fields.time("created");
    chat.updated = fields.time("updated");
    chat.pinned = fields.optionalBool("pinned");
    chat.options.systemPrompt = fields.optionalText("systemPrompt");
    chat.options.settings = fields.optionalObject("settings");
    chat.options.modelPath = fields.optionalText("modelPath");

    const QJsonArray messages = fields.array("messages");
    QSet<qint64> ids;
    for (qsizetype i = 0; i < messages.size(); ++i) {
        record.messages.append(readMessage(messages[i], QStringLiteral("%1.messages[%2]").arg(path).arg(i), ids));
        ids.insert(record.messages.last().id);
    }
    chat.activeLeaf = fields.optionalInteger("activeLeaf");
    if (chat.activeLeaf && !ids.contains(*chat.activeLeaf))
        fields.fail("activeLeaf", QCoreApplication::translate("ChatImport", "null or the id of a message in this chat"));
    return record;
}

}  // namespace

QList<ChatRecord> chatsFromJson(const QByteArray& json) {
    QJsonParseError error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &error);
    if (error.error != QJsonParseError::NoError)
        throw StoreError(QCoreApplication::translate("ChatImport", "not valid JSON: %1 at byte %2").arg(error.errorString()).arg(error.offset));
    const Fields root(document.isObject() ? QJsonValue(document.object()) : QJsonValue(document.array()), QString());
    if (root.text("format") != QLatin1String("ember-chats"))
        root.fail("format", QStringLiteral("\"ember-chats\""));
    const qint64 version = root.integer("version");
    if (version == 0 || version > kChatJsonVersion)
        root.fail("version", QCoreApplication::translate("ChatImport", "a version from 1 to %1 (newer versions come from a newer Ember)")
                                  .arg(kChatJsonVersion));

    QList<ChatRecord> records;
    const QJsonArray chats = root.array("chats");
    for (qsizetype i = 0; i < chats.size(); ++i)
        records.append(readChat(chats[i], QStringLiteral("chats[%1]").arg(i)));
    return records;
}

}  // namespace ember::store

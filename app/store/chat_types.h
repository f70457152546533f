#pragma once
// The values ChatStore reads and writes. Plain data: the QML-facing models copy what they show.

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QString>

#include <optional>

namespace ember::store {

enum class Role { System, User, Assistant };

// Generating: the engine is writing this answer now. Interrupted: it was generating when the app
// died; the row keeps what had been saved.
enum class MessageStatus { Complete, Generating, Interrupted };

enum class ExportFormat { Markdown, Json };

// The names used in the database and in exported JSON.
QString roleName(Role role);
std::optional<Role> roleFromName(QStringView name);
QString statusName(MessageStatus status);
std::optional<MessageStatus> statusFromName(QStringView name);

// What the user chose for one chat. `settings` holds the generation settings as the chat
// controller writes them (temperature, top-k, …); the store keeps the object as it is.
struct ChatOptions {
    QString systemPrompt;
    QJsonObject settings;
    QString modelPath;
    friend bool operator==(const ChatOptions&, const ChatOptions&) = default;
};

struct Chat {
    qint64 id = 0;
    QString title;
    QDateTime created;
    QDateTime updated;
    bool pinned = false;
    ChatOptions options;
    std::optional<qint64> activeLeaf;  // last message of the branch on screen; none in an empty chat
    friend bool operator==(const Chat&, const Chat&) = default;
};

// Measured by the engine for one answer; empty where unknown (user messages, interrupted answers).
struct GenerationStats {
    std::optional<qint64> ttftMs;
    std::optional<qint64> promptTokens;
    std::optional<double> promptTps;
    std::optional<qint64> genTokens;
    std::optional<double> genTps;
    QString stopReason;
    friend bool operator==(const GenerationStats&, const GenerationStats&) = default;
};

struct Message {
    qint64 id = 0;
    qint64 chatId = 0;
    std::optional<qint64> parentId;  // none for the first message of a branch from the start
    Role role = Role::User;
    QString content;
    QDateTime created;
    MessageStatus status = MessageStatus::Complete;
    GenerationStats stats;
    friend bool operator==(const Message&, const Message&) = default;
};

// A message and its alternatives (same parent), oldest first: the ◀ n/m ▶ switch shows
// index + 1 of ids.size().
struct Siblings {
    QList<qint64> ids;
    qsizetype index = 0;
};

// Search snippets mark each match with these private-use characters, which users do not type:
// the view escapes the snippet, then swaps them for its highlight markup.
inline constexpr char16_t kMatchStart = u'\uE000';
inline constexpr char16_t kMatchEnd = u'\uE001';

struct SearchHit {
    qint64 chatId = 0;
    qint64 messageId = 0;
    QString chatTitle;
    QString snippet;
};

// A chat with every message of its tree, oldest first (parents before children): the unit of
// export and import.
struct ChatRecord {
    Chat chat;
    QList<Message> messages;
    friend bool operator==(const ChatRecord&, const ChatRecord&) = default;
};

}  // namespace ember::store

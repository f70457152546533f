// The chat-prompt renderer (Completion, Llama-2 chat, ChatML) on arbitrary conversations: the
// rendered prompt holds every message's text, whatever markup the text itself contains.
#include <QString>
#include <QVector>

#include <cstdint>

#include "app/chat/chat_prompt.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    using namespace ember::app;
    const PromptFormat formats[] = {PromptFormat::Completion, PromptFormat::Llama2Chat, PromptFormat::ChatML};
    const PromptFormat format = formats[data[0] % 3];
    const QStringList parts = QString::fromUtf8(reinterpret_cast<const char*>(data) + 1, qsizetype(size - 1))
                                  .split(QChar(u'\0'));
    QVector<ChatMessage> messages;
    for (qsizetype i = 1; i < parts.size(); ++i) {
        ChatMessage m;
        m.role = i % 2 == 1 ? QStringLiteral("user") : QStringLiteral("assistant");
        m.content = parts[i];
        m.generating = i == parts.size() - 1 && m.role == QLatin1String("assistant");
        messages.push_back(m);
    }
    const QString prompt = render_prompt(format, parts[0], messages);
    for (const ChatMessage& m : messages)
        if (!prompt.contains(m.content.trimmed())) ember::fuzz::fail("a message is missing from the prompt");
    if (!parts[0].isEmpty() && !prompt.contains(parts[0]) && !messages.isEmpty() &&
        (format != PromptFormat::Llama2Chat || messages.front().role == QLatin1String("user")))
        ember::fuzz::fail("the system prompt is missing from the prompt");
    return 0;
}

// The chat-prompt renderers on arbitrary input. First byte 0–3: a built-in format (Completion,
// Llama-2 chat, ChatML, Mistral) on an arbitrary conversation; the rendered prompt holds every message's
// text, whatever markup the text itself contains. Otherwise the rest is a chat template (from a
// model file, so hostile): parsing and rendering it over a fixed conversation either give text or
// an error, never a crash, a hang or runaway memory (the interpreter's own limits).
#include <QString>
#include <QVector>

#include <cstdint>
#include <string>

#include "app/chat/chat_prompt.h"
#include "chat_template/jinja/template.h"
#include "fuzz_support.h"

namespace {

void run_template(const uint8_t* data, size_t size) {
    using namespace ember::jinja;
    auto t = Template::parse(std::string(reinterpret_cast<const char*>(data), size));
    if (!t.ok()) {
        if (t.error().message.empty()) ember::fuzz::fail("a parse error without a message");
        return;
    }
    const Dict context{
        {"messages", Value(List{Value(Dict{{"role", Value("system")}, {"content", Value("Be brief.")}}),
                                Value(Dict{{"role", Value("user")}, {"content", Value("Who begat Enos?")}})})},
        {"add_generation_prompt", Value(true)},
        {"bos_token", Value("<s>")},
        {"eos_token", Value("</s>")}};
    auto out = t.value().render(context);
    if (!out.ok() && out.error().message.empty()) ember::fuzz::fail("a render error without a message");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    using namespace ember::app;
    if (data[0] >= 4) {
        run_template(data + 1, size - 1);
        return 0;
    }
    const PromptFormat formats[] = {PromptFormat::Completion, PromptFormat::Llama2Chat, PromptFormat::ChatML,
                                    PromptFormat::Mistral};
    const PromptFormat format = formats[data[0]];
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

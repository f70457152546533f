#include "app/chat/chat_prompt.h"

namespace ember::app {

PromptFormat prompt_format_from_name(const QString& name) {
    if (name == QLatin1String("llama2")) return PromptFormat::Llama2Chat;
    if (name == QLatin1String("chatml")) return PromptFormat::ChatML;
    if (name == QLatin1String("model")) return PromptFormat::ModelTemplate;
    if (name == QLatin1String("mistral")) return PromptFormat::Mistral;
    return PromptFormat::Completion;
}

QString render_prompt(PromptFormat format, const QString& system_prompt, const QVector<ChatMessage>& messages) {
    QString out;
    switch (format) {
        case PromptFormat::Completion:
            // The conversation is one running text the model extends; the system prompt leads it.
            out = system_prompt;
            for (const ChatMessage& m : messages) out += m.content;
            return out;
        case PromptFormat::Llama2Chat: {
            // [INST] <<SYS>>…<</SYS>> user [/INST] answer </s><s>[INST] … ; BOS comes from the tokenizer.
            bool first = true;
            for (const ChatMessage& m : messages) {
                if (m.role == QLatin1String("user")) {
                    if (!first) out += QStringLiteral("<s>");
                    out += QStringLiteral("[INST] ");
                    if (first && !system_prompt.isEmpty())
                        out += QStringLiteral("<<SYS>>\n") + system_prompt + QStringLiteral("\n<</SYS>>\n\n");
                    out += m.content.trimmed() + QStringLiteral(" [/INST]");
                    first = false;
                } else if (!m.content.isEmpty()) {
                    out += QLatin1Char(' ') + m.content.trimmed() + QStringLiteral(" </s>");
                }
            }
            return out;
        }
        case PromptFormat::ChatML: {
            if (!system_prompt.isEmpty())
                out += QStringLiteral("<|im_start|>system\n") + system_prompt + QStringLiteral("<|im_end|>\n");
            for (const ChatMessage& m : messages) {
                out += QStringLiteral("<|im_start|>") + m.role + QLatin1Char('\n') + m.content;
                if (!m.generating) out += QStringLiteral("<|im_end|>\n");
            }
            return out;
        }
        case PromptFormat::Mistral: {
            // <s>[INST] q [/INST]answer</s>[INST] q2 [/INST]: no system role, so the system prompt
            // leads the first question; BOS comes from the tokenizer.
            bool first = true;
            for (const ChatMessage& m : messages) {
                if (m.role == QLatin1String("user")) {
                    out += QStringLiteral("[INST] ");
                    if (first && !system_prompt.isEmpty()) out += system_prompt + QStringLiteral("\n\n");
                    out += m.content + QStringLiteral(" [/INST]");
                    first = false;
                } else {
                    out += m.content;
                    if (!m.generating) out += QStringLiteral("</s>");
                }
            }
            return out;
        }
        case PromptFormat::ModelTemplate: break;
    }
    return out;
}

}  // namespace ember::app

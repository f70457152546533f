#pragma once
// The model's own chat template (tokenizer.chat_template) over the conversation on screen: the
// system prompt as the first message, an answer being written after the generation prompt.

#include <QString>
#include <QVector>

#include <optional>

#include "chat_template/chat_template.h"
#include "app/chat/message_list_model.h"

namespace ember::app {

struct RenderedPrompt {
    QString text;
    QString error;  // empty when rendered
};

class ModelTemplate {
public:
    ModelTemplate() = default;
    // Parses `source`; a template that does not parse is not usable and error() says why.
    ModelTemplate(const QString& source, const QString& bos_token, const QString& eos_token);

    const QString& source() const { return source_; }
    bool usable() const { return template_.has_value(); }
    const QString& error() const { return error_; }

    // The messages up to and including an assistant message being written (generating), whose
    // text so far follows the generation prompt. A template that refuses a system message
    // (Mistral's, Gemma's) gets the system prompt at the head of the first question instead.
    RenderedPrompt render(const QString& system_prompt, const QVector<ChatMessage>& messages) const;

private:
    QString source_;
    std::optional<chat::ChatTemplate> template_;
    QString error_;
};

}  // namespace ember::app

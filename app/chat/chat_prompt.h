#pragma once
// Renders a conversation into the text the model continues. Plain completion suits base models
// such as the demo model; Llama-2 chat (ReluLLaMA/ProSparse chat fine-tunes), Mistral's [INST]
// (Bamboo, which is built on Mistral 7B) and ChatML cover the common instruction formats.

#include <QString>
#include <QVector>

#include "app/chat/message_list_model.h"

namespace ember::app {

// ModelTemplate: the model's own chat template, run by ModelTemplate (model_template.h).
enum class PromptFormat { Completion, Llama2Chat, ChatML, ModelTemplate, Mistral };

PromptFormat prompt_format_from_name(const QString& name);  // unknown names: Completion

// The messages up to and including an empty assistant message to be continued, if any, in a
// built-in format (ModelTemplate renders nothing here).
QString render_prompt(PromptFormat format, const QString& system_prompt, const QVector<ChatMessage>& messages);

}  // namespace ember::app

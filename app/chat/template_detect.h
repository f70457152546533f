#pragma once
// The prompt format a model asks for: its own chat template (tokenizer.chat_template, Jinja)
// when Ember's interpreter can run it; otherwise the built-in format whose tokens the template
// emits, or plain completion, saying why.

#include <QString>

#include "app/chat/chat_prompt.h"

namespace ember::app {

struct DetectedFormat {
    PromptFormat format = PromptFormat::Completion;
    QString name;  // as prompt_format_from_name takes it
    QString why;   // for the settings panel, e.g. "the model's chat template uses <|im_start|>"
};

// architecture and file_name matter only without a template: Bamboo's chat fine-tune (a "dpo"
// file) gets Mistral's format, the one of the model Bamboo is built on.
DetectedFormat detect_prompt_format(const QString& chat_template, const QString& architecture = {},
                                    const QString& file_name = {});

// The name prompt_format_from_name maps to `format`.
QString prompt_format_name(PromptFormat format);

}  // namespace ember::app

#pragma once
// Which built-in prompt format a model's own chat template (tokenizer.chat_template, Jinja)
// asks for. Ember does not run Jinja: it recognizes the formats it renders by the tokens their
// templates emit, and says so when a template matches none of them.

#include <QString>

#include "app/chat/chat_prompt.h"

namespace ember::app {

struct DetectedFormat {
    PromptFormat format = PromptFormat::Completion;
    QString name;  // as prompt_format_from_name takes it
    QString why;   // for the settings panel, e.g. "the model's chat template uses <|im_start|>"
};

DetectedFormat detect_prompt_format(const QString& chat_template);

// The name prompt_format_from_name maps to `format`.
QString prompt_format_name(PromptFormat format);

}  // namespace ember::app

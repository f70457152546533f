#include "app/chat/template_detect.h"

#include <QObject>

#include "chat_template/jinja/template.h"

namespace ember::app {

QString prompt_format_name(PromptFormat format) {
    switch (format) {
        case PromptFormat::Llama2Chat: return QStringLiteral("llama2");
        case PromptFormat::ChatML: return QStringLiteral("chatml");
        case PromptFormat::ModelTemplate: return QStringLiteral("model");
        case PromptFormat::Mistral: return QStringLiteral("mistral");
        case PromptFormat::Completion: break;
    }
    return QStringLiteral("completion");
}

DetectedFormat detect_prompt_format(const QString& chat_template, const QString& architecture, const QString& file_name) {
    DetectedFormat d;
    QString unusable;
    if (!chat_template.trimmed().isEmpty()) {
        auto parsed = jinja::Template::parse(chat_template.toStdString());
        if (parsed.ok()) {
            d.format = PromptFormat::ModelTemplate;
            d.name = prompt_format_name(d.format);
            d.why = QObject::tr("the model's own chat template (tokenizer.chat_template) is run");
            return d;
        }
        unusable = QObject::tr("its chat template cannot be run (%1); ").arg(QString::fromStdString(parsed.error().message));
    }
    if (chat_template.trimmed().isEmpty() && architecture == QLatin1String("bamboo") &&
        file_name.contains(QLatin1String("dpo"), Qt::CaseInsensitive)) {
        d.format = PromptFormat::Mistral;
        d.why = QObject::tr("Bamboo-DPO has no chat template; Bamboo is built on Mistral 7B, so its [INST] format is used");
    } else if (chat_template.trimmed().isEmpty() && architecture == QLatin1String("smallthinker")) {
        d.format = PromptFormat::ChatML;
        d.why = QObject::tr("the file has no chat template; SmallThinker is prompted in ChatML (<|im_start|>), as PowerInfer's own instructions do");
    } else if (chat_template.trimmed().isEmpty()) {
        d.why = QObject::tr("the model has no chat template: its text is continued as written");
    } else if (chat_template.contains(QLatin1String("<|im_start|>"))) {
        d.format = PromptFormat::ChatML;
        d.why = QObject::tr("the model's chat template uses <|im_start|> (ChatML)");
    } else if (chat_template.contains(QLatin1String("[INST]"))) {
        d.format = PromptFormat::Llama2Chat;
        d.why = QObject::tr("the model's chat template uses [INST] (Llama 2 chat)");
    } else {
        d.why = QObject::tr("the model's chat template matches no built-in format: choose one, or keep plain completion");
    }
    d.name = prompt_format_name(d.format);
    d.why = unusable + d.why;
    return d;
}

}  // namespace ember::app

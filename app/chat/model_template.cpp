#include "app/chat/model_template.h"

#include <QObject>

namespace ember::app {

ModelTemplate::ModelTemplate(const QString& source, const QString& bos_token, const QString& eos_token) : source_(source) {
    if (source.trimmed().isEmpty()) {
        error_ = QObject::tr("the model has no chat template");
        return;
    }
    auto parsed = chat::ChatTemplate::parse(source.toStdString(), bos_token.toStdString(), eos_token.toStdString());
    if (parsed.ok()) template_ = std::move(parsed.value());
    else error_ = QString::fromStdString(parsed.error().message);
}

RenderedPrompt ModelTemplate::render(const QString& system_prompt, const QVector<ChatMessage>& messages) const {
    if (!template_) return {{}, error_};
    QVector<ChatMessage> turns = messages;
    QString answer_so_far;
    bool generation_prompt = false;
    if (!turns.isEmpty() && turns.back().generating && turns.back().role == QLatin1String("assistant")) {
        answer_so_far = turns.back().content;
        generation_prompt = true;
        turns.pop_back();
    }
    std::vector<chat::Message> list;
    if (!system_prompt.isEmpty()) list.push_back({"system", system_prompt.toStdString()});
    for (const ChatMessage& m : turns) list.push_back({m.role.toStdString(), m.content.toStdString()});
    auto out = template_->render(list, generation_prompt);
    if (!out.ok())
        return {{}, QObject::tr("the model's chat template: %1").arg(QString::fromStdString(out.error().message))};
    return {QString::fromStdString(out.value()) + answer_so_far, {}};
}

}  // namespace ember::app

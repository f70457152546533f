#include "app/chat/model_template.h"

#include <QObject>

namespace ember::app {
namespace {

jinja::Value message(const QString& role, const QString& content) {
    return jinja::Value(jinja::Dict{{"role", jinja::Value(role.toStdString())}, {"content", jinja::Value(content.toStdString())}});
}

}  // namespace

ModelTemplate::ModelTemplate(const QString& source, const QString& bos_token, const QString& eos_token)
    : source_(source), bos_token_(bos_token), eos_token_(eos_token) {
    if (source.trimmed().isEmpty()) {
        error_ = QObject::tr("the model has no chat template");
        return;
    }
    auto parsed = jinja::Template::parse(source.toStdString());
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
    auto run = [&](bool system_as_message) -> Result<std::string> {
        jinja::List list;
        if (system_as_message && !system_prompt.isEmpty()) list.push_back(message(QStringLiteral("system"), system_prompt));
        bool merged = system_as_message || system_prompt.isEmpty();
        for (const ChatMessage& m : turns) {
            QString content = m.content;
            if (!merged && m.role == QLatin1String("user")) {
                content = system_prompt + QStringLiteral("\n\n") + content;
                merged = true;
            }
            list.push_back(message(m.role, content));
        }
        const jinja::Dict context{{"messages", jinja::Value(std::move(list))},
                                  {"add_generation_prompt", jinja::Value(generation_prompt)},
                                  {"bos_token", jinja::Value(bos_token_.toStdString())},
                                  {"eos_token", jinja::Value(eos_token_.toStdString())},
                                  {"tools", jinja::Value(jinja::None{})}};
        return template_->render(context);
    };
    auto out = run(true);
    if (!out.ok() && !system_prompt.isEmpty()) {
        auto merged = run(false);
        if (merged.ok()) out = std::move(merged);
    }
    if (!out.ok())
        return {{}, QObject::tr("the model's chat template: %1").arg(QString::fromStdString(out.error().message))};
    return {QString::fromStdString(out.value()) + answer_so_far, {}};
}

}  // namespace ember::app

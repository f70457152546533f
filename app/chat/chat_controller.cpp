#include "app/chat/chat_controller.h"

#include <QJSEngine>

#include "app/engine/engine_controller.h"

namespace ember::app {
namespace {

ChatController* g_instance = nullptr;

// A screen repaints at ~60 Hz; flushing tokens at half that keeps streaming smooth and bounds
// the model updates per second whatever the generation speed.
constexpr int kFlushIntervalMs = 33;

QString stats_line(const QVariantMap& s) {
    return QStringLiteral("%1 tokens · %2 tok/s · first token %3 ms · %4")
        .arg(s.value("generatedTokens").toInt())
        .arg(s.value("tokensPerSecond").toDouble(), 0, 'f', 1)
        .arg(s.value("firstTokenMs").toDouble(), 0, 'f', 0)
        .arg(s.value("stopReason").toString());
}

}  // namespace

ChatController::ChatController(EngineController* engine, QObject* parent) : QObject(parent), engine_(engine) {
    flush_timer_.setInterval(kFlushIntervalMs);
    connect(&flush_timer_, &QTimer::timeout, this, &ChatController::flush);
    connect(engine_, &EngineController::token, this, [this](const QString& t) {
        if (generating_) pending_ += t;
    });
    connect(engine_, &EngineController::generationFinished, this, &ChatController::on_finished);
    connect(engine_, &EngineController::generationFailed, this, &ChatController::on_failed);
}

ChatController* ChatController::create(QQmlEngine*, QJSEngine*) {
    Q_ASSERT(g_instance);
    QJSEngine::setObjectOwnership(g_instance, QJSEngine::CppOwnership);
    return g_instance;
}

void ChatController::set_instance(ChatController* controller) { g_instance = controller; }

void ChatController::set_prompt_format(const QString& f) {
    if (f == prompt_format_) return;
    prompt_format_ = f;
    emit settingsChanged();
}

void ChatController::set_system_prompt(const QString& s) {
    if (s == system_prompt_) return;
    system_prompt_ = s;
    emit settingsChanged();
}

void ChatController::set_temperature(double t) {
    if (t == temperature_) return;
    temperature_ = t;
    emit settingsChanged();
}

void ChatController::set_max_tokens(int n) {
    if (n == max_tokens_) return;
    max_tokens_ = n;
    emit settingsChanged();
}

void ChatController::send(const QString& text) {
    if (generating_ || text.isEmpty() || engine_->status() != QLatin1String("ready")) return;
    messages_.append(ChatMessage{0, QStringLiteral("user"), text, false, {}});
    start_answer();
}

void ChatController::regenerate() {
    if (generating_ || messages_.messages().isEmpty()) return;
    if (messages_.messages().back().role == QLatin1String("assistant")) messages_.remove_last();
    if (messages_.messages().isEmpty()) return;
    start_answer();
}

void ChatController::stop() {
    if (generating_) engine_->stop();
}

void ChatController::clear() {
    if (generating_) return;
    messages_.set_messages({});
}

QString ChatController::renderedPrompt() const {
    return render_prompt(prompt_format_from_name(prompt_format_), system_prompt_, messages_.messages());
}

void ChatController::start_answer() {
    messages_.append(ChatMessage{0, QStringLiteral("assistant"), {}, true, {}});
    const QString prompt = renderedPrompt();
    generating_ = true;
    emit generatingChanged();
    pending_.clear();
    flush_timer_.start();
    engine_->generate(prompt, max_tokens_, temperature_);
}

void ChatController::flush() {
    if (pending_.isEmpty()) return;
    messages_.append_to_last(pending_);
    pending_.clear();
}

void ChatController::on_finished(const QVariantMap& stats) {
    if (!generating_) return;
    flush_timer_.stop();
    flush();
    messages_.finish_last(stats_line(stats));
    generating_ = false;
    emit generatingChanged();
    emit answerFinished(stats);
}

void ChatController::on_failed(const QString& error) {
    if (!generating_) return;
    flush_timer_.stop();
    flush();
    messages_.finish_last(QStringLiteral("error: ") + error);
    generating_ = false;
    emit generatingChanged();
}

}  // namespace ember::app

#include "app/self_check.h"

#include <QCoreApplication>
#include <QMetaEnum>
#include <QMutex>

#include <cstdio>

#include "app/app_shell.h"

namespace ember::app {

namespace {
// The QML engine's warnings (a binding on undefined, a missing type): any one fails the check.
// Qt calls the handler on whichever thread logs.
QMutex g_warnings_mutex;
QStringList g_qml_warnings;
QtMessageHandler g_previous_handler = nullptr;

void record_qml_warnings(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    const QString file = QString::fromUtf8(context.file ? context.file : "");
    const QLatin1String category(context.category ? context.category : "");
    const bool from_qml = category == QLatin1String("qml") || category == QLatin1String("js") ||
                          file.endsWith(QLatin1String(".qml")) || message.contains(QLatin1String(".qml:"));
    if ((type == QtWarningMsg || type == QtCriticalMsg) && from_qml) {
        QMutexLocker lock(&g_warnings_mutex);
        g_qml_warnings << message;
    }
    if (g_previous_handler) g_previous_handler(type, context, message);
}

QStringList qml_warnings() {
    QMutexLocker lock(&g_warnings_mutex);
    return g_qml_warnings;
}
}  // namespace

SelfCheck::SelfCheck(AppShell& shell, QString prompt, int timeout_ms) : shell_(shell), prompt_(std::move(prompt)) {
    g_previous_handler = qInstallMessageHandler(record_qml_warnings);
    deadline_.setSingleShot(true);
    deadline_.setInterval(timeout_ms);
    connect(&deadline_, &QTimer::timeout, this, [this] {
        finish(1, QStringLiteral("no answer within %1 s (engine status: %2)")
                      .arg(deadline_.interval() / 1000)
                      .arg(QLatin1String(QMetaEnum::fromType<EngineController::Status>().valueToKey(
                          int(shell_.engine().status())))));
    });
}

SelfCheck::~SelfCheck() {
    qInstallMessageHandler(g_previous_handler);
    g_previous_handler = nullptr;
}

void SelfCheck::start() {
    connect(&shell_.engine(), &EngineController::statusChanged, this, &SelfCheck::on_engine_status);
    connect(&shell_.chat(), &ChatController::generatingChanged, this, &SelfCheck::on_generating);
    connect(shell_.chat().messages(), &QAbstractItemModel::dataChanged, this, &SelfCheck::on_text);
    deadline_.start();
    on_engine_status();
}

void SelfCheck::on_engine_status() {
    const EngineController& engine = shell_.engine();
    if (engine.status() == EngineController::Status::Error) {
        finish(1, QStringLiteral("the model did not load: %1").arg(engine.error()));
    } else if (engine.status() == EngineController::Status::Ready && phase_ == Phase::Loading) {
        phase_ = Phase::Streaming;
        std::printf("model: %s (%s)\nprompt: %s\n", qPrintable(engine.model_name()),
                    engine.sparse() ? "sparse" : "dense", qPrintable(prompt_));
        // A chat of its own, not the one the app reopened; long enough an answer that it is
        // still streaming when it is stopped.
        shell_.chat().newChat();
        shell_.chat().set_max_tokens(4096);
        shell_.chat().send(prompt_);
    } else if (engine.model_path().isEmpty() && engine.status() != EngineController::Status::Loading) {
        finish(1, QStringLiteral("no model to load: pass --model PATH"));
    }
}

void SelfCheck::on_text() {
    // The first streamed text: the answer is arriving; stop it as a user would.
    const auto& messages = shell_.chat().messages()->messages();
    if (phase_ != Phase::Streaming || stop_sent_ || !shell_.chat().generating() || messages.isEmpty() ||
        messages.back().content.isEmpty())
        return;
    stop_sent_ = true;
    std::printf("streaming: %s\n", qPrintable(messages.back().content.simplified()));
    shell_.chat().stop();
}

void SelfCheck::on_generating() {
    if (phase_ == Phase::Loading || phase_ == Phase::Done || shell_.chat().generating()) return;
    const auto& messages = shell_.chat().messages()->messages();
    const ChatMessage answer = messages.isEmpty() ? ChatMessage{} : messages.back();
    if (phase_ == Phase::Streaming) {
        if (answer.content.trimmed().isEmpty()) return finish(1, QStringLiteral("the model answered nothing"));
        // A terse model may finish before the stop arrives: then Stop is not what ended it.
        if (answer.stats.endsWith(QLatin1String("stopped")))
            std::printf("stopped: %s\n", qPrintable(answer.content.simplified()));
        else
            std::printf("ended before the stop (%s): %s\n", qPrintable(answer.stats), qPrintable(answer.content.simplified()));
        phase_ = Phase::Regenerating;
        shell_.chat().set_max_tokens(32);
        QTimer::singleShot(0, &shell_.chat(), &ChatController::regenerate);
        return;
    }
    if (answer.content.trimmed().isEmpty()) return finish(1, QStringLiteral("the model answered nothing"));
    if (answer.sibling_count != 2)
        return finish(1, QStringLiteral("the regenerated answer has %1 siblings, not 2").arg(answer.sibling_count));
    if (const QStringList warnings = qml_warnings(); !warnings.isEmpty())
        return finish(1, QStringLiteral("QML warnings:\n%1").arg(warnings.join(QLatin1Char('\n'))));
    finish(0, QStringLiteral("answer: %1 (answer 2 of 2)").arg(answer.content.trimmed()));
}

void SelfCheck::finish(int code, const QString& message) {
    if (phase_ == Phase::Done) return;
    phase_ = Phase::Done;
    deadline_.stop();
    std::fprintf(code == 0 ? stdout : stderr, "%s\nself-check: %s\n", qPrintable(message), code == 0 ? "ok" : "FAILED");
    std::fflush(nullptr);
    QCoreApplication::exit(code);
}

}  // namespace ember::app

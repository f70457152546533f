#include "app/self_check.h"

#include <QCoreApplication>

#include <cstdio>

#include "app/app_shell.h"

namespace ember::app {

SelfCheck::SelfCheck(AppShell& shell, QString prompt, int timeout_ms) : shell_(shell), prompt_(std::move(prompt)) {
    deadline_.setSingleShot(true);
    deadline_.setInterval(timeout_ms);
    connect(&deadline_, &QTimer::timeout, this, [this] {
        finish(1, QStringLiteral("no answer within %1 s (engine status: %2)")
                      .arg(deadline_.interval() / 1000)
                      .arg(shell_.engine().status()));
    });
}

void SelfCheck::start() {
    connect(&shell_.engine(), &EngineController::statusChanged, this, &SelfCheck::on_engine_status);
    connect(&shell_.chat(), &ChatController::generatingChanged, this, &SelfCheck::on_generating);
    deadline_.start();
    on_engine_status();
}

void SelfCheck::on_engine_status() {
    const EngineController& engine = shell_.engine();
    if (engine.status() == QStringLiteral("error")) {
        finish(1, QStringLiteral("the model did not load: %1").arg(engine.error()));
    } else if (engine.status() == QStringLiteral("ready") && !sent_) {
        sent_ = true;
        std::printf("model: %s (%s)\nprompt: %s\n", qPrintable(engine.model_name()),
                    engine.sparse() ? "sparse" : "dense", qPrintable(prompt_));
        shell_.chat().send(prompt_);
    } else if (engine.model_path().isEmpty() && engine.status() != QStringLiteral("loading")) {
        finish(1, QStringLiteral("no model to load: pass --model PATH"));
    }
}

void SelfCheck::on_generating() {
    if (!sent_ || shell_.chat().generating()) return;
    const auto& messages = shell_.chat().messages()->messages();
    const QString answer = messages.isEmpty() ? QString() : messages.back().content;
    if (answer.trimmed().isEmpty())
        finish(1, QStringLiteral("the model answered nothing"));
    else
        finish(0, QStringLiteral("answer: %1").arg(answer.trimmed()));
}

void SelfCheck::finish(int code, const QString& message) {
    if (done_) return;
    done_ = true;
    deadline_.stop();
    std::fprintf(code == 0 ? stdout : stderr, "%s\nself-check: %s\n", qPrintable(message), code == 0 ? "ok" : "FAILED");
    std::fflush(nullptr);
    QCoreApplication::exit(code);
}

}  // namespace ember::app

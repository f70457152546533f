#pragma once
// `ember --self-check`: drives the running app the way a user would — wait for the model, send
// one prompt, watch the answer stream in, stop it, regenerate it, wait for the new answer — then
// prints what happened and quits. Any QML warning meanwhile fails it. It is how an installed
// package is checked end to end (packaging/linux/check-package.sh), and what a user can run to
// tell a broken install from a broken model.

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

namespace ember::app {

class AppShell;

class SelfCheck : public QObject {
    Q_OBJECT
public:
    // Counts QML warnings from here on: make it before AppShell::start() loads the window.
    SelfCheck(AppShell& shell, QString prompt, int timeout_ms);
    ~SelfCheck() override;

    // Starts watching; the application exits with 0 once the regenerated answer arrived, 1 on
    // any failure.
    void start();

private:
    enum class Phase { Loading, Streaming, Regenerating, Done };

    void on_engine_status();
    void on_text();
    void on_generating();
    void finish(int code, const QString& message);

    AppShell& shell_;
    QString prompt_;
    QTimer deadline_;
    Phase phase_ = Phase::Loading;
    bool stop_sent_ = false;
};

}  // namespace ember::app

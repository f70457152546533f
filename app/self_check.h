#pragma once
// `ember --self-check`: drives the running app the way a user would — wait for the model, send
// one prompt, wait for the answer — then prints the answer and quits. It is how an installed
// package is checked end to end (packaging/linux/check-package.sh), and what a user can run to
// tell a broken install from a broken model.

#include <QObject>
#include <QString>
#include <QTimer>

namespace ember::app {

class AppShell;

class SelfCheck : public QObject {
    Q_OBJECT
public:
    SelfCheck(AppShell& shell, QString prompt, int timeout_ms);

    // Starts watching; the application exits with 0 once an answer arrived, 1 on any failure.
    void start();

private:
    void on_engine_status();
    void on_generating();
    void finish(int code, const QString& message);

    AppShell& shell_;
    QString prompt_;
    QTimer deadline_;
    bool sent_ = false;
    bool done_ = false;
};

}  // namespace ember::app

#pragma once
// The system-tray icon beside the window: what Ember is doing (an answer, downloads) and Quit,
// and a click shows the window. Only where the desktop has a tray (Qt Widgets).

#include <QMenu>
#include <QObject>
#include <QSystemTrayIcon>

class QAction;
class QWindow;

namespace ember::app {

class AppShell;

class TrayIcon : public QObject {
    Q_OBJECT

public:
    TrayIcon(AppShell& shell, QWindow* window);

private:
    void refresh();

    AppShell& shell_;
    QWindow* window_;
    QMenu menu_;
    QAction* status_;
    QSystemTrayIcon icon_;
};

}  // namespace ember::app

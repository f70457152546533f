#include "app/tray/tray_icon.h"

#include <QAction>
#include <QApplication>
#include <QWindow>

#include "app/app_shell.h"
#include "app/tray/tray_status.h"

namespace ember::app {

TrayIcon::TrayIcon(AppShell& shell, QWindow* window) : shell_(shell), window_(window) {
    status_ = menu_.addAction(QString());
    status_->setEnabled(false);
    menu_.addSeparator();
    connect(menu_.addAction(tr("Show Ember")), &QAction::triggered, this, [this] {
        window_->show();
        window_->raise();
        window_->requestActivate();
    });
    connect(menu_.addAction(tr("Quit")), &QAction::triggered, qApp, &QApplication::quit);
    icon_.setIcon(QApplication::windowIcon());
    icon_.setContextMenu(&menu_);
    connect(&icon_, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason reason) {
        if (reason == QSystemTrayIcon::Trigger) window_->setVisible(!window_->isVisible());
    });
    auto* downloads = shell_.hub().downloads();
    connect(&shell_.chat(), &ChatController::generatingChanged, this, &TrayIcon::refresh);
    connect(downloads, &QAbstractItemModel::dataChanged, this, &TrayIcon::refresh);
    connect(downloads, &QAbstractItemModel::rowsInserted, this, &TrayIcon::refresh);
    refresh();
    icon_.show();
}

void TrayIcon::refresh() {
    const QString line = tray_status(shell_.chat().generating(), *shell_.hub().downloads());
    status_->setText(line);
    icon_.setToolTip(QStringLiteral("Ember — %1").arg(line));
}

}  // namespace ember::app

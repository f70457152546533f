#pragma once
// Shared by the window tests: every warning the app logs (QML ones included) is recorded, so a
// test can fail on any; and the demo model copied into a scratch folder, because the engine
// writes its .gpuidx cache beside the model.

#include <QQuickItem>
#include <QString>
#include <QStringList>
#include <QtGlobal>

#include "app/hub/library_files.h"

namespace gui_test {

inline QStringList g_warnings;
inline QtMessageHandler g_previous = nullptr;

inline void record_warnings(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (type == QtWarningMsg || type == QtCriticalMsg || type == QtFatalMsg) g_warnings << message;
    if (g_previous) g_previous(type, context, message);
}

inline void install_warning_recorder() { g_previous = qInstallMessageHandler(record_warnings); }

inline QString copy_demo_model(const QString& dir) {
    return ember::app::copy_model_with_statistics(QStringLiteral(EMBER_DEMO_MODEL), dir + "/model");
}

// The first item named `name` in the visual tree under `root`: list delegates and loaded items
// are found by their visual parents, not as QObject children.
inline QQuickItem* find_item(QQuickItem* root, const QString& name) {
    if (!root) return nullptr;
    if (root->objectName() == name) return root;
    for (QQuickItem* child : root->childItems())
        if (QQuickItem* found = find_item(child, name)) return found;
    return nullptr;
}

// Whether a visible item under `root` shows exactly `text` (a tooltip is found in the window's
// overlay, which is under its content item).
inline bool shows_text(QQuickItem* root, const QString& text) {
    if (!root || !root->isVisible()) return false;
    if (root->property("text").toString() == text) return true;
    for (QQuickItem* child : root->childItems())
        if (shows_text(child, text)) return true;
    return false;
}

}  // namespace gui_test

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

ApplicationWindow {
    id: window

    width: 1180
    height: 760
    // An 800×600 screen, less its panel and title bar.
    minimumWidth: 760
    minimumHeight: 520
    visible: true

    // The chat list and the device panel beside the chat: shown when the window has room for
    // them, hidden below 1100 px so the chat keeps its width; each has a button to show it anyway.
    property bool showChats: width >= 1100
    property bool showPanel: width >= 1100
    title: EngineController.modelName.length > 0 ? qsTr("Ember — %1").arg(EngineController.modelName) : qsTr("Ember")

    header: StatusBar {}

    // Theme and text size (AppSettings, saved in the data folder): every role the controls draw
    // with comes from the theme module.
    font.pointSize: Qt.application.font.pointSize * AppSettings.fontScale
    palette.window: Theme.window
    palette.windowText: Theme.text
    palette.base: Theme.base
    palette.alternateBase: Theme.alternate
    palette.text: Theme.text
    palette.button: Theme.alternate
    palette.buttonText: Theme.text
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.placeholderText: Theme.mutedText
    palette.light: Theme.bevelLight
    palette.midlight: Theme.bevelMidlight
    palette.mid: Theme.border
    palette.dark: Theme.bevelDark
    palette.shadow: "#000000"
    palette.toolTipBase: Theme.base
    palette.toolTipText: Theme.text
    palette.link: Theme.accent

    // The last window size and position, restored at start and saved when the window closes (or
    // the app quits from the tray). The position only when it is on a screen that is still there.
    // A size that does not fit the screen's free area with a title bar above it (a first start on
    // a small screen, or a size saved on a larger one) opens maximized instead, which the window
    // manager fits to the screen frame and all, with Send, the tabs and the panel buttons on it.
    Component.onCompleted: {
        const g = AppSettings.windowGeometry;
        const saved = g.width > 0;
        const w = saved ? g.width : width, h = saved ? g.height : height;
        const frame = 48;  // title bar and borders, about
        width = Math.max(minimumWidth, Math.min(w, Screen.desktopAvailableWidth));
        height = Math.max(minimumHeight, Math.min(h, Screen.desktopAvailableHeight - frame));
        if (w > Screen.desktopAvailableWidth || h + frame > Screen.desktopAvailableHeight) {
            visibility = Window.Maximized;
            return;
        }
        if (!saved)
            return;
        const cx = g.x + g.width / 2, cy = g.y + g.height / 2;
        for (let i = 0; i < Qt.application.screens.length; ++i) {
            const s = Qt.application.screens[i];
            if (cx >= s.virtualX && cx < s.virtualX + s.width && cy >= s.virtualY && cy < s.virtualY + s.height) {
                x = g.x;
                y = g.y;
                return;
            }
        }
    }
    onClosing: AppSettings.windowGeometry = Qt.rect(x, y, width, height)

    Shortcut {
        sequence: "Esc"
        onActivated: ChatController.stop()
    }
    Shortcut {
        sequence: "Ctrl+N"
        onActivated: {
            tabs.currentIndex = 0;
            ChatController.newChat();
        }
    }
    Shortcut {
        sequence: "Ctrl+Shift+C"
        onActivated: ChatController.copyConversation()
    }
    Shortcut {
        sequence: "Ctrl+K"
        onActivated: {
            tabs.currentIndex = 0;
            search.open();
        }
    }

    // Closing a dialog gives the keyboard back to the message box.
    SearchPopup {
        id: search
        onClosed: chatView.focusMessage()
    }
    ShortcutSheet {
        id: shortcutSheet
        onClosed: chatView.focusMessage()
    }
    Welcome {
        id: welcome

        onClosed: chatView.focusMessage()

        onShowModel: repo => {
            tabs.currentIndex = 1;
            HubController.openRepo(repo);
        }
    }

    // Called by AppShell on the first run.
    function showWelcome() {
        welcome.open();
    }
    function showShortcuts() {
        shortcutSheet.open();
    }
    Shortcut {
        sequence: "F1"
        onActivated: window.showShortcuts()
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        RowLayout {
            Layout.fillWidth: true
            spacing: 0

            TabBar {
                id: tabs

                objectName: "mainTabs"
                Layout.fillWidth: true

                TabButton {
                    text: qsTr("Chat")
                    Accessible.name: qsTr("Chat")
                }
                TabButton {
                    text: qsTr("Models")
                    Accessible.name: qsTr("Models")
                }
            }
            ModelPicker {
                visible: tabs.currentIndex === 0
                Layout.preferredWidth: Math.min(340, window.width * 0.36)
            }
            ToolButton {
                objectName: "showChatsButton"
                visible: tabs.currentIndex === 0
                text: qsTr("Chats")
                checkable: true
                checked: window.showChats
                onToggled: window.showChats = checked
                Accessible.name: qsTr("Show the list of chats")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Show or hide the list of chats")
            }
            ToolButton {
                objectName: "showPanelButton"
                visible: tabs.currentIndex === 0
                text: qsTr("Device")
                checkable: true
                checked: window.showPanel
                onToggled: window.showPanel = checked
                Accessible.name: qsTr("Show the device panel")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Show or hide the GPU/CPU split, the VRAM budget and appearance")
            }
        }

        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: tabs.currentIndex

            RowLayout {
                spacing: 0

                ConversationList {
                    objectName: "chatsPane"
                    visible: window.showChats
                    Layout.preferredWidth: 260
                    Layout.fillHeight: true
                }

                ChatView {
                    id: chatView

                    Layout.fillWidth: true
                    Layout.fillHeight: true
                }

                SidePanel {
                    objectName: "sidePanel"
                    visible: window.showPanel
                    Layout.preferredWidth: 340
                    Layout.fillHeight: true
                }
            }

            ModelsPage {}
        }
    }
}

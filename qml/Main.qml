import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

ApplicationWindow {
    id: window

    width: 1180
    height: 760
    visible: true
    title: EngineController.modelName.length > 0 ? qsTr("Ember — %1").arg(EngineController.modelName) : qsTr("Ember")

    header: StatusBar {}

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

    SearchPopup {
        id: search
    }
    ShortcutSheet {
        id: shortcutSheet
    }
    Shortcut {
        sequence: "F1"
        onActivated: shortcutSheet.open()
    }

    ColumnLayout {
        anchors.fill: parent
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

        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: tabs.currentIndex

            RowLayout {
                spacing: 0

                ConversationList {
                    Layout.preferredWidth: 260
                    Layout.fillHeight: true
                }

                ChatView {
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                }

                SidePanel {
                    Layout.preferredWidth: 340
                    Layout.fillHeight: true
                }
            }

            ModelsPage {}
        }
    }
}

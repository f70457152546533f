import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

ToolBar {
    id: composer

    function submit() {
        if (input.text.length === 0)
            return;
        ChatController.send(input.text);
        input.clear();
    }

    ChatSettings {
        id: chatSettings
    }
    Shortcut {
        sequence: "Ctrl+,"
        onActivated: chatSettings.open()
    }

    RowLayout {
        anchors.fill: parent
        anchors.margins: 8
        spacing: 8

        TextField {
            id: input

            objectName: "promptInput"
            Layout.fillWidth: true
            placeholderText: qsTr("Message (Enter to send, Esc to stop)")
            enabled: EngineController.status === "ready" || EngineController.status === "generating"
            onAccepted: composer.submit()
            Accessible.name: qsTr("Message")
        }
        Button {
            text: ChatController.generating ? qsTr("Stop") : qsTr("Send")
            onClicked: ChatController.generating ? ChatController.stop() : composer.submit()
        }
        Button {
            text: qsTr("Copy chat")
            enabled: !ChatController.generating && ChatController.chatId > 0
            onClicked: ChatController.copyConversation()
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Copy the conversation as Markdown (Ctrl+Shift+C)")
        }
        Button {
            objectName: "chatSettingsButton"
            text: qsTr("Settings")
            onClicked: chatSettings.open()
            ToolTip.visible: hovered
            ToolTip.text: qsTr("System prompt and sampling for this chat (Ctrl+,)")
        }
        Button {
            text: qsTr("Regenerate")
            enabled: !ChatController.generating
            onClicked: ChatController.regenerate()
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Every keyboard shortcut, on F1.
Dialog {
    objectName: "shortcutSheet"
    title: qsTr("Keyboard shortcuts")
    parent: Overlay.overlay
    anchors.centerIn: parent
    modal: true
    // The window dims behind it.
    Overlay.modal: Rectangle {
        color: Theme.scrim
    }
    standardButtons: Dialog.Close

    GridLayout {
        columns: 2
        columnSpacing: 24
        rowSpacing: 6

        Repeater {
            model: [
                ["Enter", qsTr("Send the message")],
                ["Esc", qsTr("Stop the answer")],
                ["Ctrl+N", qsTr("New chat")],
                ["Ctrl+K", qsTr("Search all chats")],
                ["Ctrl+Shift+C", qsTr("Copy the chat as Markdown")],
                ["Ctrl+,", qsTr("Chat settings")],
                ["Ctrl+Enter", qsTr("Save an edited message")],
                ["F1", qsTr("This list")]
            ]

            delegate: RowLayout {
                required property var modelData

                Layout.columnSpan: 2
                Label {
                    text: parent.modelData[0]
                    font.bold: true
                    Layout.preferredWidth: 110
                }
                Label { text: parent.modelData[1] }
            }
        }
    }
}

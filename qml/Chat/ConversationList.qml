import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// The sidebar of the Chat tab: New chat, the chats under their date headings, and the undo bar
// after a delete.
Pane {
    id: sidebar

    padding: 0

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        Button {
            objectName: "newChatButton"
            Layout.fillWidth: true
            Layout.margins: 8
            text: qsTr("New chat")
            enabled: !ChatController.generating
            onClicked: ChatController.newChat()
            Accessible.name: qsTr("New chat")
        }
        RowLayout {
            Layout.fillWidth: true
            Layout.leftMargin: 8
            Layout.rightMargin: 8

            Button {
                objectName: "exportButton"
                Layout.fillWidth: true
                text: qsTr("Export…")
                onClicked: exportMenu.popup()
                Accessible.name: qsTr("Export chats as Markdown or JSON")

                Menu {
                    id: exportMenu

                    MenuItem {
                        text: qsTr("This chat…")
                        enabled: ChatController.chatId !== 0
                        onTriggered: HistoryController.chooseExportFile(false)
                    }
                    MenuItem {
                        text: qsTr("All chats…")
                        onTriggered: HistoryController.chooseExportFile(true)
                    }
                }
            }
            Button {
                objectName: "importButton"
                Layout.fillWidth: true
                text: qsTr("Import…")
                enabled: !ChatController.generating
                onClicked: HistoryController.chooseImportFile()
                Accessible.name: qsTr("Import chats from a JSON export")
            }
        }
        Label {
            objectName: "transferMessage"
            Layout.fillWidth: true
            Layout.margins: 8
            visible: text.length > 0
            text: HistoryController.transferMessage
            wrapMode: Text.Wrap
            font.pointSize: 8
            color: Theme.mutedText
        }

        ListView {
            id: list

            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: HistoryController.conversations
            delegate: ConversationDelegate {
                width: ListView.view.width
            }
            section.property: "section"
            section.delegate: Label {
                required property string section

                text: section
                font.bold: true
                opacity: 0.7
                leftPadding: 12
                topPadding: 8
                bottomPadding: 4
            }
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Conversations")

            Label {
                anchors.centerIn: parent
                visible: list.count === 0
                text: qsTr("No chats yet")
                color: Theme.mutedText
            }
            // As in ChatView: the first row is made once, unseen, before the first chat needs it.
            Loader {
                asynchronous: true
                visible: false
                active: list.count === 0
                onLoaded: active = false
                sourceComponent: ConversationDelegate {
                    width: list.width
                    chatId: -1
                    title: "…"
                    pinned: false
                }
            }
        }

        UndoBar {
            Layout.fillWidth: true
        }
    }
}

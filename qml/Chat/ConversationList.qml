import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

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

        ListView {
            id: list

            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: ChatController.conversations
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
                opacity: 0.6
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

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

Pane {
    id: view

    padding: 0

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ListView {
            id: list

            objectName: "messageList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 8
            topMargin: 12
            bottomMargin: 12
            model: ChatController.messages
            delegate: MessageDelegate {
                width: ListView.view.width
            }
            // Follow the answer while it streams, unless the user scrolled up to read.
            onContentHeightChanged: if (atYEnd || ChatController.generating) positionViewAtEnd()
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Conversation")

            Label {
                anchors.centerIn: parent
                visible: list.count === 0
                text: EngineController.status === "ready" ? qsTr("Write the start of a text; the model continues it.")
                                                          : qsTr("Loading the model…")
                opacity: 0.6
            }
        }

        // A full context is never cut silently: the user decides.
        Pane {
            objectName: "contextFullBar"
            Layout.fillWidth: true
            visible: ChatController.contextFull && !ChatController.generating

            RowLayout {
                anchors.fill: parent

                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    text: qsTr("The conversation fills the model's context (%1 tokens), so the answer stopped.")
                          .arg(EngineController.contextSize)
                }
                Button {
                    objectName: "dropOldestTurnButton"
                    text: qsTr("Leave out the oldest turn")
                    onClicked: ChatController.dropOldestTurn()
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("The model no longer sees the first question and its answer (they stay here) and answers again")
                }
                Button {
                    text: qsTr("New chat")
                    onClicked: ChatController.newChat()
                }
            }
        }
        Composer {
            Layout.fillWidth: true
        }
    }
}

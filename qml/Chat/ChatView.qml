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

        Composer {
            Layout.fillWidth: true
        }
    }
}

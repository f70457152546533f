import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

// Shown for a while after a chat is deleted; Undo restores it.
ToolBar {
    id: bar

    property string deletedTitle

    objectName: "undoBar"
    visible: hideTimer.running

    Connections {
        target: HistoryController

        function onChatDeleted(title: string) {
            bar.deletedTitle = title;
            hideTimer.restart();
        }
    }

    Timer {
        id: hideTimer

        interval: 8000
    }

    RowLayout {
        anchors.fill: parent
        anchors.margins: 4

        Label {
            Layout.fillWidth: true
            text: qsTr("Deleted “%1”").arg(bar.deletedTitle)
            elide: Text.ElideRight
        }
        Button {
            text: qsTr("Undo")
            onClicked: {
                HistoryController.undoDelete();
                hideTimer.stop();
            }
            Accessible.name: qsTr("Undo delete")
        }
    }
}

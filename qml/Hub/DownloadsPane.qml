import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// Every download of this session, running or ended, and the unfinished ones of earlier
// sessions, with their progress and actions.
ColumnLayout {
    id: pane

    spacing: 6

    Label {
        text: qsTr("Downloads")
        font.bold: true
    }
    Label {
        objectName: "downloadsError"
        Layout.fillWidth: true
        visible: HubController.downloadsError.length > 0
        text: HubController.downloadsError
        wrapMode: Text.Wrap
        color: Theme.error
    }
    ListView {
        id: list

        objectName: "downloadList"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        spacing: 6
        model: HubController.downloads
        delegate: DownloadDelegate {
            width: ListView.view.width
        }
        Accessible.role: Accessible.List
        Accessible.name: qsTr("Downloads")

        Label {
            anchors.centerIn: parent
            visible: list.count === 0
            text: qsTr("No downloads yet")
            color: Theme.mutedText
        }
    }
}

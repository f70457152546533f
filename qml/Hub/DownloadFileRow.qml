import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// One file of a download: its path, state and bytes.
RowLayout {
    id: row

    // {path, state, bytesDone, bytesTotal} from DownloadListModel's files role.
    required property var modelData

    spacing: 6

    Label {
        Layout.fillWidth: true
        text: row.modelData.path
        elide: Text.ElideMiddle
        font.pointSize: 8
    }
    // The downloader's state names (hub::to_string) in the words the download's own line uses: a
    // stopped file keeps its .part and resumes, so it is paused, not cancelled.
    function stateText(state) {
        switch (state) {
        case "queued": return qsTr("waiting to start");
        case "downloading": return qsTr("downloading");
        case "waiting": return qsTr("waiting to retry");
        case "verifying": return qsTr("checking");
        case "done": return qsTr("done");
        case "failed": return qsTr("failed");
        case "cancelled": return qsTr("paused");
        }
        return state;
    }

    Label {
        objectName: "downloadFileState"
        text: qsTr("%1 · %2 of %3").arg(row.stateText(row.modelData.state)).arg(HubController.formatBytes(row.modelData.bytesDone))
              .arg(HubController.formatBytes(row.modelData.bytesTotal))
        font.pointSize: 8
        color: Theme.mutedText
    }
}

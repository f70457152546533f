import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

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
    Label {
        text: qsTr("%1 · %2 of %3").arg(row.modelData.state).arg(HubController.formatBytes(row.modelData.bytesDone))
              .arg(HubController.formatBytes(row.modelData.bytesTotal))
        font.pointSize: 8
        opacity: 0.7
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The model hub and library: search and open repos on the left, the open repo's files in the
// middle, downloads and installed models on the right.
Pane {
    id: page

    objectName: "modelsPage"
    padding: 8

    RowLayout {
        anchors.fill: parent
        spacing: 12

        SearchPane {
            Layout.preferredWidth: 320
            Layout.fillHeight: true
        }

        RepoFilesPane {
            Layout.fillWidth: true
            Layout.minimumWidth: 260
            Layout.fillHeight: true
        }

        ColumnLayout {
            Layout.preferredWidth: 380
            Layout.maximumWidth: 420
            Layout.fillHeight: true
            spacing: 12

            DownloadsPane {
                Layout.fillWidth: true
                Layout.fillHeight: true
            }

            LibraryPane {
                Layout.fillWidth: true
                Layout.fillHeight: true
            }
        }
    }
}

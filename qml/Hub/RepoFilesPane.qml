import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

// The open repo: its files classified, and a Download button on each model file.
ColumnLayout {
    id: pane

    spacing: 6

    RowLayout {
        Layout.fillWidth: true

        Label {
            objectName: "repoTitle"
            Layout.fillWidth: true
            text: HubController.repoId.length > 0 ? HubController.repoId : qsTr("No repo open")
            font.bold: true
            elide: Text.ElideMiddle
        }
        Badge {
            visible: HubController.repoGated
            text: qsTr("gated: needs HF_TOKEN")
            tint: "#c0392b"
        }
        BusyIndicator {
            running: HubController.opening
            implicitWidth: 24
            implicitHeight: 24
        }
    }
    Label {
        objectName: "repoError"
        Layout.fillWidth: true
        visible: HubController.repoError.length > 0
        text: HubController.repoError
        wrapMode: Text.Wrap
        color: "#c0392b"
    }
    ListView {
        id: files

        objectName: "repoFiles"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: HubController.repoFiles
        delegate: RepoFileDelegate {
            width: ListView.view.width
        }
        Accessible.role: Accessible.List
        Accessible.name: qsTr("Files of the open repo")

        Label {
            anchors.centerIn: parent
            visible: files.count === 0 && !HubController.opening
            text: qsTr("Pick a search result or open a repo")
            opacity: 0.6
        }
    }
}

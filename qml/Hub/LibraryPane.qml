import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// Installed models, with Load/Unload, Show and Delete (asks first); folders of GGUF files can be
// added in place.
ColumnLayout {
    id: pane

    spacing: 6

    RowLayout {
        Layout.fillWidth: true

        Label {
            Layout.fillWidth: true
            text: qsTr("Library")
            font.bold: true
        }
        Button {
            objectName: "addFolderButton"
            text: qsTr("Add folder…")
            Accessible.name: qsTr("Add a folder of GGUF models to the library without copying it")
            onClicked: HubController.chooseFolder()
        }
        Button {
            text: qsTr("Refresh")
            Accessible.name: qsTr("Refresh the library")
            onClicked: HubController.refreshLibrary()
        }
    }
    Label {
        Layout.fillWidth: true
        visible: HubController.libraryError.length > 0
        text: HubController.libraryError
        wrapMode: Text.Wrap
        color: Theme.error
    }
    ListView {
        id: list

        objectName: "libraryList"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: HubController.library
        spacing: Theme.spacingSmall
        delegate: LibraryDelegate {
            width: ListView.view.width
            onDeleteRequested: (row, name) => {
                confirm.row = row;
                confirm.name = name;
                confirm.open();
            }
        }
        Accessible.role: Accessible.List
        Accessible.name: qsTr("Installed models")

        Label {
            anchors.centerIn: parent
            visible: list.count === 0
            text: qsTr("No models installed")
            color: Theme.mutedText
        }
    }

    Dialog {
        id: confirm

        property int row: -1
        property string name

        anchors.centerIn: Overlay.overlay
        width: 440  // a fixed width: the wrapped question would otherwise size the dialog by itself
        modal: true
        // The window dims behind it.
        Overlay.modal: Rectangle {
            color: Theme.scrim
        }
        title: qsTr("Delete model")
        standardButtons: Dialog.Yes | Dialog.No
        onAccepted: HubController.deleteModel(confirm.row)

        Label {
            text: qsTr("Delete %1 and the files it needs from this computer?").arg(confirm.name)
            wrapMode: Text.Wrap
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember
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
            text: HubController.hasToken ? qsTr("gated: token set") : qsTr("gated: needs a token")
            tint: HubController.hasToken ? Theme.success : Theme.error
        }
        Spinner {
            running: HubController.opening
        }
    }
    // Gated repos (accept the terms on the repo's page first) download with the user's token;
    // a repo the Hub refused (private, say) is opened again with it once it is saved.
    RowLayout {
        Layout.fillWidth: true
        visible: (HubController.repoGated || HubController.repoRefused) && !HubController.hasToken

        TextField {
            id: tokenField

            objectName: "tokenField"
            Layout.fillWidth: true
            echoMode: TextInput.Password
            placeholderText: qsTr("Hugging Face token (hf_…)")
            Accessible.name: qsTr("Hugging Face access token")
            onAccepted: saveToken.clicked()
        }
        Button {
            id: saveToken

            text: qsTr("Save token")
            enabled: tokenField.text.trim().length > 0
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Kept in the system keychain, or where Hugging Face's own tools keep it, readable by you only")
            onClicked: if (HubController.setToken(tokenField.text)) tokenField.clear()
        }
    }
    Label {
        objectName: "tokenPlace"
        Layout.fillWidth: true
        visible: HubController.repoGated && HubController.hasToken
        text: qsTr("Token %1").arg(HubController.tokenPlace)
        wrapMode: Text.Wrap
        color: Theme.mutedText
        font.pointSize: 8
    }
    Label {
        Layout.fillWidth: true
        visible: HubController.tokenError.length > 0
        text: HubController.tokenError
        wrapMode: Text.Wrap
        color: Theme.error
    }
    Label {
        objectName: "repoError"
        Layout.fillWidth: true
        visible: HubController.repoError.length > 0
        text: HubController.repoError
        wrapMode: Text.Wrap
        color: Theme.error
    }
    ListView {
        id: files

        objectName: "repoFiles"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: HubController.repoFiles
        spacing: Theme.spacingSmall
        delegate: RepoFileDelegate {
            width: ListView.view.width
        }
        Accessible.role: Accessible.List
        Accessible.name: qsTr("Files of the open repo")

        Label {
            anchors.centerIn: parent
            visible: files.count === 0 && !HubController.opening
            text: qsTr("Pick a search result or open a repo")
            color: Theme.mutedText
        }
    }
}

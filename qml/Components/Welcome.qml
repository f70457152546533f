import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// The first-run screen: what this computer has and a PowerInfer model that fits it. Closing it
// in any way marks it seen.
Dialog {
    id: welcome

    property var info: ({})
    signal showModel(string repo)

    objectName: "welcome"
    title: qsTr("Welcome to Ember")
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: 520
    modal: true
    // The window dims behind it.
    Overlay.modal: Rectangle {
        color: Theme.scrim
    }
    standardButtons: Dialog.Close

    onAboutToShow: info = HubController.hardwareSuggestion()
    onClosed: AppSettings.welcomed = true

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("The demo model is ready in the chat, offline. For real work, Ember runs PowerInfer's sparse models: the neurons that fire most on the GPU, the rest on the CPU.")
        }
        Label {
            objectName: "hardwareSummary"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("This computer: %1 of memory, %2 CPU threads, %3.")
                  .arg(HubController.formatBytes(welcome.info.ram ?? 0)).arg(welcome.info.threads ?? 0)
                  .arg((welcome.info.gpu ?? "").length > 0 ? welcome.info.gpu : qsTr("no GPU in use (%1)").arg(welcome.info.gpuReason ?? ""))
        }
        Label {
            objectName: "suggestion"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.bold: true
            text: (welcome.info.suggestionRepo ?? "").length > 0
                  ? qsTr("Suggested: %1 (about %2), %3.").arg(welcome.info.suggestionName)
                        .arg(HubController.formatBytes(welcome.info.suggestionBytes)).arg(welcome.info.why)
                  : qsTr("No larger model suggested: %1.").arg(welcome.info.why ?? "")
        }
        Button {
            objectName: "showSuggestedModel"
            visible: (welcome.info.suggestionRepo ?? "").length > 0
            text: qsTr("Show it in Models")
            onClicked: {
                welcome.showModel(welcome.info.suggestionRepo);
                welcome.close();
            }
        }
    }
}

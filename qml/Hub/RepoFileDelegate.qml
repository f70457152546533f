import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// One file of the open repo: path, kind, quantization, size; model files can be downloaded
// with everything they need (activation/ for sparse models, config files).
ItemDelegate {
    id: file

    required property string path
    required property double size
    required property string kind
    required property string quantization
    required property bool isModel
    required property int downloadFiles
    required property double downloadBytes
    required property string fit
    required property string fitKind

    Accessible.name: file.path

    padding: Theme.spacing
    background: RowCard {
        hovered: file.hovered
    }

    // The path on a line of its own, so a narrow pane elides the details, not the name.
    contentItem: ColumnLayout {
        spacing: 2

        Label {
            Layout.fillWidth: true
            text: file.path
            elide: Text.ElideMiddle
            font.bold: file.isModel
        }
        RowLayout {
            spacing: 6

            KindBadge {
                kind: file.kind
            }
            Badge {
                visible: file.quantization.length > 0
                text: file.quantization
                tint: Theme.special
            }
            Label {
                text: HubController.formatBytes(file.size)
                color: Theme.mutedText
            }
            // In a narrow pane the fit badge gives way (elided; the tooltip has it whole), never
            // drawn over its neighbours.
            Badge {
                objectName: "fitBadge"
                // A file that cannot run says why on a line of its own (below) instead.
                visible: file.isModel && file.fitKind.length > 0 && file.fitKind !== "cannotrun"
                Layout.fillWidth: true
                Layout.minimumWidth: 24
                Layout.maximumWidth: implicitWidth
                elide: Text.ElideRight
                text: file.fitKind === "gpu" ? qsTr("all on GPU")
                      : file.fitKind === "hybrid" ? file.fit
                      : file.fitKind === "cpu" ? qsTr("CPU only")
                      : file.fitKind === "toolarge" ? qsTr("too large") : qsTr("fit ?")
                tint: file.fitKind === "gpu" ? Theme.success : file.fitKind === "hybrid" ? Theme.warning
                      : file.fitKind === "toolarge" ? Theme.error : Theme.neutral
                ToolTip.visible: fitArea.containsMouse
                ToolTip.text: (file.fitKind === "gpu" ? qsTr("The whole model fits in your GPU's memory: the fastest way to run it.")
                               : file.fitKind === "hybrid" ? qsTr("The often-firing neurons go to the GPU, the rest run on the CPU.")
                               : file.fitKind === "cpu" ? qsTr("Runs on the CPU from system memory; no GPU is used.")
                               : file.fitKind === "toolarge" ? qsTr("Needs more memory than this computer has.")
                               : qsTr("Ember could not tell how this file fits.")) + "\n" + file.fit
                Accessible.name: file.fit

                MouseArea {
                    id: fitArea

                    anchors.fill: parent
                    hoverEnabled: true
                    acceptedButtons: Qt.NoButton
                }
            }
            Item {
                Layout.fillWidth: true
                Layout.preferredWidth: 0
            }
            Button {
                objectName: "downloadButton"
                visible: file.isModel
                // A file the engine cannot run yet is never a plain one-click download.
                text: file.fitKind === "cannotrun" ? qsTr("Download anyway") : qsTr("Download")
                Accessible.name: qsTr("Download %1").arg(file.path)
                ToolTip.visible: file.hovered
                ToolTip.text: qsTr("%1 files, %2 in all").arg(file.downloadFiles).arg(HubController.formatBytes(file.downloadBytes))
                onClicked: HubController.download(file.path)
            }
        }
        Label {
            objectName: "cannotRunReason"
            visible: file.isModel && file.fitKind === "cannotrun"
            Layout.fillWidth: true
            text: file.fit
            wrapMode: Text.Wrap
            color: Theme.error
        }
    }
}

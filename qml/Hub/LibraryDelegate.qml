import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// One installed model: repo (or the added folder's name), file, type, size; Load hands it to the
// engine, Unload frees it, Show opens its folder; Delete (downloaded) or Remove (added folder).
ItemDelegate {
    id: entry

    required property int index
    required property string repo
    required property string file
    required property string path
    required property double size
    required property bool sparse
    required property string quantization
    required property string folder

    signal deleteRequested(int row, string name)

    Accessible.name: qsTr("%1 %2").arg(entry.repo).arg(entry.file)

    padding: Theme.spacing
    background: RowCard {
        hovered: entry.hovered
    }

    contentItem: ColumnLayout {
        spacing: 2

        // Anchors, not a layout: a badge that appears while the Models tab is hidden (Load from the
        // chat) still takes its place when the tab is shown.
        Item {
            Layout.fillWidth: true
            implicitHeight: Math.max(name.implicitHeight, badges.implicitHeight)

            Label {
                id: name

                width: parent.width - badges.width - Theme.spacing
                anchors.verticalCenter: parent.verticalCenter
                text: entry.repo
                elide: Text.ElideMiddle
                font.bold: true
            }
            Row {
                id: badges

                anchors.right: parent.right
                anchors.verticalCenter: parent.verticalCenter
                spacing: Theme.spacingSmall

                Badge {
                    visible: entry.folder.length > 0
                    text: qsTr("added folder")
                    tint: Theme.accent
                }
                Badge {
                    visible: EngineController.modelPath === entry.path
                    text: qsTr("loaded")
                    tint: Theme.success
                }
                Badge {
                    visible: entry.quantization.length > 0
                    text: entry.quantization
                    tint: Theme.special
                }
                KindBadge {
                    kind: entry.sparse ? "sparse" : "dense"
                }
            }
        }
        RowLayout {
            Layout.fillWidth: true

            Label {
                Layout.fillWidth: true
                text: qsTr("%1 · %2").arg(entry.file).arg(HubController.formatBytes(entry.size))
                elide: Text.ElideMiddle
                font.pointSize: 8
                color: Theme.mutedText
            }
            Button {
                readonly property bool loaded: EngineController.modelPath === entry.path
                text: loaded ? qsTr("Unload") : qsTr("Load")
                enabled: EngineController.status !== EngineController.Loading
                Accessible.name: (loaded ? qsTr("Unload %1") : qsTr("Load %1")).arg(entry.file)
                onClicked: loaded ? EngineController.unloadModel() : HubController.loadModel(entry.index)
            }
            Button {
                text: qsTr("Show")
                Accessible.name: qsTr("Show %1 in its folder").arg(entry.file)
                onClicked: HubController.revealModel(entry.index)
            }
            Button {
                text: entry.folder.length > 0 ? qsTr("Remove") : qsTr("Delete")
                Accessible.name: (entry.folder.length > 0 ? qsTr("Remove %1 from the library") : qsTr("Delete %1")).arg(entry.file)
                onClicked: entry.folder.length > 0 ? HubController.deleteModel(entry.index)
                                                   : entry.deleteRequested(entry.index, entry.file)
            }
        }
    }
}

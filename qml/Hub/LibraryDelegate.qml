import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

// One installed model: repo, file, type, size; Load hands it to the engine.
ItemDelegate {
    id: entry

    required property int index
    required property string repo
    required property string file
    required property string path
    required property double size
    required property bool sparse
    required property string quantization

    signal deleteRequested(int row, string name)

    Accessible.name: qsTr("%1 %2").arg(entry.repo).arg(entry.file)

    contentItem: ColumnLayout {
        spacing: 2

        RowLayout {
            Layout.fillWidth: true

            Label {
                Layout.fillWidth: true
                text: entry.repo
                elide: Text.ElideMiddle
                font.bold: true
            }
            Badge {
                visible: EngineController.modelPath === entry.path
                text: qsTr("loaded")
                tint: "#27ae60"
            }
            Badge {
                visible: entry.quantization.length > 0
                text: entry.quantization
                tint: "#8e44ad"
            }
            KindBadge {
                kind: entry.sparse ? "sparse" : "dense"
            }
        }
        RowLayout {
            Layout.fillWidth: true

            Label {
                Layout.fillWidth: true
                text: qsTr("%1 · %2").arg(entry.file).arg(HubController.formatBytes(entry.size))
                elide: Text.ElideMiddle
                font.pointSize: 8
                opacity: 0.7
            }
            Button {
                text: qsTr("Load")
                enabled: EngineController.modelPath !== entry.path
                Accessible.name: qsTr("Load %1").arg(entry.file)
                onClicked: HubController.loadModel(entry.index)
            }
            Button {
                text: qsTr("Delete")
                Accessible.name: qsTr("Delete %1").arg(entry.file)
                onClicked: entry.deleteRequested(entry.index, entry.file)
            }
        }
    }
}

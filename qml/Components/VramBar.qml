import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// What the device holds against its budget: dense parts, the KV cache and hot neurons, as one
// stacked bar with a legend.
ColumnLayout {
    id: vram

    function mib(bytes) {
        return (bytes / 1048576).toFixed(1) + " MiB";
    }
    function share(bytes) {
        return EngineController.budgetBytes > 0 ? Math.min(1, bytes / EngineController.budgetBytes) : 0;
    }

    readonly property var parts: [
        { name: qsTr("Dense"), bytes: EngineController.denseBytes, tint: Theme.accent,
          tip: qsTr("Attention, the predictors and the output layer: the parts every token uses.") },
        { name: qsTr("KV cache"), bytes: EngineController.kvBytes, tint: Theme.special,
          tip: qsTr("The conversation so far, as the model keeps it in memory.") },
        { name: qsTr("Hot neurons"), bytes: EngineController.hotBytes, tint: Theme.warning,
          tip: qsTr("The FFN neurons that fire most often, held by the GPU.") }
    ]

    spacing: 4

    Rectangle {
        objectName: "vramBar"
        Layout.fillWidth: true
        implicitHeight: 12
        radius: 3
        color: Theme.cold
        clip: true
        Accessible.role: Accessible.ProgressBar
        Accessible.name: qsTr("VRAM used: %1 of %2").arg(vram.mib(EngineController.usedBytes)).arg(vram.mib(EngineController.budgetBytes))

        Row {
            anchors.fill: parent
            Repeater {
                model: vram.parts
                Rectangle {
                    required property var modelData
                    width: parent.width * vram.share(modelData.bytes)
                    height: parent.height
                    color: modelData.tint
                }
            }
        }
    }
    Flow {
        Layout.fillWidth: true
        spacing: 10
        Repeater {
            model: vram.parts
            Row {
                required property var modelData
                spacing: 4
                ToolTip.visible: hover.hovered
                ToolTip.text: modelData.tip
                HoverHandler {
                    id: hover
                }
                Rectangle {
                    width: 10
                    height: 10
                    radius: 2
                    color: modelData.tint
                    anchors.verticalCenter: parent.verticalCenter
                }
                Label {
                    objectName: "vramLegend" + modelData.name
                    text: modelData.name + " " + vram.mib(modelData.bytes)
                    color: Theme.mutedText
                    font.pixelSize: 11
                }
            }
        }
    }
}

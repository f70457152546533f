import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember
import Ember.App

// The device and what the model does on it, in cards down the side of the chat; the column
// scrolls when the window is too short for all of them.
ScrollView {
    id: panel

    function mib(bytes) {
        return (bytes / 1048576).toFixed(1) + " MiB";
    }

    contentWidth: availableWidth
    padding: Theme.spacing
    background: Rectangle {
        color: Theme.window
    }

    ColumnLayout {
        width: panel.availableWidth
        spacing: Theme.spacing

        Card {
            Layout.fillWidth: true

            Label {
                text: qsTr("Device")
                font.bold: true
            }
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: EngineController.deviceName === "sim"
                      ? qsTr("Preview of a GPU with %1 (no GPU in use: simulated on the CPU)").arg(panel.mib(EngineController.budgetBytes))
                      : EngineController.deviceName === "cpu" || EngineController.deviceName === ""
                        ? qsTr("CPU")
                        : qsTr("GPU: %1, hot neurons; CPU: the rest").arg(EngineController.deviceName)
            }
            Label {
                Layout.fillWidth: true
                visible: EngineController.deviceNote.length > 0
                wrapMode: Text.Wrap
                text: EngineController.deviceNote
                color: Theme.mutedText
            }
            Switch {
                objectName: "useGpuSwitch"
                text: EngineController.gpuFound ? qsTr("Use the GPU") : qsTr("Use the GPU (none found)")
                // Nothing to turn on without a GPU: shown off, while the budget previews one.
                checked: AppSettings.useGpu && EngineController.gpuFound
                enabled: EngineController.gpuFound && EngineController.status !== EngineController.Loading
                onToggled: AppSettings.useGpu = checked
                Accessible.name: qsTr("Use the GPU: a sparse model's hot neurons, a dense model's first layers")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Off: everything runs on the CPU; the budget previews a GPU of that size")
            }

            Label {
                text: budget.enabled ? qsTr("VRAM budget: %1").arg(panel.mib(budget.value))
                                     : qsTr("VRAM budget: none, the GPU is off")
            }
            Slider {
                id: budget

                objectName: "budgetSlider"
                Layout.fillWidth: true
                // A GPU turned off holds nothing: everything runs on the CPU.
                enabled: EngineController.deviceName !== "cpu"
                from: 0
                to: Math.max(1, EngineController.maxBudgetBytes)
                stepSize: Math.max(1, to / 50)  // what an arrow key moves; a drag does not snap to it
                value: EngineController.budgetBytes
                // Re-plan when the user lets go, not for every pixel of the drag; arrow keys re-plan
                // once they rest.
                onPressedChanged: if (!pressed) EngineController.setBudget(value)
                onMoved: if (!pressed) keyedBudget.restart()
                Accessible.name: qsTr("VRAM budget")
            }
            Timer {
                id: keyedBudget

                interval: 400
                onTriggered: EngineController.setBudget(budget.value)
            }
            VramBar {
                Layout.fillWidth: true
            }
            Label {
                objectName: "vramUsedLabel"
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: qsTr("Used %1 of %2 · %3 of %4 neurons hot").arg(panel.mib(EngineController.usedBytes))
                      .arg(panel.mib(EngineController.budgetBytes))
                      .arg(EngineController.hotNeurons).arg(EngineController.totalNeurons)
                color: Theme.mutedText
            }

            SparsitySetting {
                Layout.fillWidth: true
            }
        }
        Card {
            Layout.fillWidth: true

            Label {
                text: qsTr("Neuron split")
                font.bold: true
            }
            Label {
                objectName: "answerShareLabel"
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                // The engine's latest answer, whichever chat it went to: the open chat may be another.
                text: EngineController.tokensPerSecond > 0
                      ? qsTr("Latest answer: %1 % of active neurons on the device · %2 tok/s")
                        .arg((EngineController.answerDeviceShare * 100).toFixed(0))
                        .arg(EngineController.tokensPerSecond.toFixed(1))
                      : qsTr("No answer from this model yet")
                color: Theme.mutedText
            }
            TokenStrip {
                Layout.fillWidth: true
                Layout.preferredWidth: 0
            }
            SplitLegend {
                // The panel's width, not the legend's on one line.
                Layout.fillWidth: true
                Layout.preferredWidth: 0
            }
            LayerBars {
                Layout.fillWidth: true
                // Every layer when they fit, else a list that scrolls on its own.
                Layout.preferredHeight: Math.min(count * 17, 340)
            }
        }
        Card {
            Layout.fillWidth: true

            ServeSettings {
                Layout.fillWidth: true
            }
        }
        Card {
            Layout.fillWidth: true

            AppearanceSettings {
                Layout.fillWidth: true
            }
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

ToolBar {
    id: bar

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 12
        anchors.rightMargin: 12
        spacing: 12

        Label {
            text: EngineController.modelName.length > 0 ? EngineController.modelName : qsTr("No model")
            font.bold: true
            Accessible.name: qsTr("Model")
        }
        Label {
            Layout.fillWidth: true
            text: EngineController.status === EngineController.Error ? EngineController.error
                  : ChatController.historyError.length > 0 ? qsTr("History not saved: %1").arg(ChatController.historyError)
                  : EngineController.modelDescription
            color: EngineController.status === EngineController.Error || ChatController.historyError.length > 0 ? Theme.error : palette.windowText
            elide: Text.ElideRight
        }
        // Where the model runs and, when no GPU is used, why: on every page.
        Label {
            id: deviceStatus

            objectName: "deviceStatus"
            // The reason a GPU is not used is the longer text: it takes up to 60 % of the bar before
            // the model's description gives way.
            Layout.maximumWidth: Math.max(420, bar.width * 0.6)
            visible: EngineController.modelName.length > 0
            elide: Text.ElideRight
            color: Theme.mutedText
            text: {
                const name = EngineController.deviceName;
                const where = name === "" || name === "cpu" || name === "sim" ? qsTr("CPU") : qsTr("GPU: %1").arg(name);
                return EngineController.deviceNote.length > 0 ? where + " · " + EngineController.deviceNote : where;
            }
            Accessible.role: Accessible.StaticText
            Accessible.name: qsTr("Device: %1").arg(text)
            ToolTip.visible: deviceHover.hovered && truncated
            ToolTip.text: text

            HoverHandler {
                id: deviceHover
            }
        }
        // Only while loading: a spinner redraws the window 60 times a second, which on a machine
        // without a GPU would take CPU from an answer; the tok/s beside it shows one streams.
        Spinner {
            running: EngineController.status === EngineController.Loading
        }
        Label {
            objectName: "engineStatus"
            text: {
                switch (EngineController.status) {
                case EngineController.Loading:
                    return qsTr("loading");
                case EngineController.Ready:
                    return qsTr("ready");
                case EngineController.Generating:
                    return qsTr("%1 tok/s").arg(EngineController.tokensPerSecond.toFixed(1));
                case EngineController.Error:
                    return qsTr("error");
                default:
                    return qsTr("no model");
                }
            }
        }
    }
}

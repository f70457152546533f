import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// What the split view's colours mean.
Flow {
    id: legend

    spacing: 10

    Repeater {
        model: [
            {"colour": Theme.hot, "text": qsTr("hot: on the device"),
             "tip": qsTr("Neurons that fire often: kept in the GPU's memory and computed there when they fire.")},
            {"colour": Theme.cold, "text": qsTr("cold: on the CPU"),
             "tip": qsTr("Neurons that fire rarely: left in system memory and computed by the CPU when they fire.")},
            {"colour": Theme.activeOnDevice, "text": qsTr("active, ran on the device"),
             "tip": qsTr("Hot neurons that fired for the latest tokens.")},
            {"colour": Theme.activeOnCpu, "text": qsTr("active, ran on the CPU"),
             "tip": qsTr("Cold neurons that fired for the latest tokens.")}
        ]

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
                anchors.verticalCenter: parent.verticalCenter
                color: parent.modelData.colour
                radius: 2
            }
            Label {
                text: parent.modelData.text
                font.pointSize: 8
                color: Theme.mutedText
            }
        }
    }
}

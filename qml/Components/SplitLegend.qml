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
            {"colour": SplitColors.hot, "text": qsTr("hot: on the device")},
            {"colour": SplitColors.cold, "text": qsTr("cold: on the CPU")},
            {"colour": SplitColors.activeOnDevice, "text": qsTr("active, ran on the device")},
            {"colour": SplitColors.activeOnCpu, "text": qsTr("active, ran on the CPU")}
        ]

        Row {
            required property var modelData

            spacing: 4

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
                opacity: 0.8
            }
        }
    }
}

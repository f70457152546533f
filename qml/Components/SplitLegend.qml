import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// What the split view's colours mean.
Flow {
    id: legend

    spacing: 10

    Repeater {
        model: [
            {"colour": Qt.rgba(0.2, 0.45, 0.9, 0.35), "text": qsTr("hot: on the device")},
            {"colour": Qt.rgba(0.5, 0.5, 0.5, 0.25), "text": qsTr("cold: on the CPU")},
            {"colour": "#2f6fe0", "text": qsTr("active, ran on the device")},
            {"colour": "#e08a2f", "text": qsTr("active, ran on the CPU")}
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

import QtQuick
import QtQuick.Controls
import Ember.App

// The latest tokens, one column each, newest on the right: the part of its active neurons the
// device computed (blue, from the bottom) and the part the CPU did (orange).
Item {
    id: strip

    objectName: "tokenStrip"
    implicitHeight: 28
    Accessible.role: Accessible.Chart
    Accessible.name: qsTr("Device share of active neurons, per token")

    Row {
        anchors.right: parent.right
        height: parent.height
        spacing: 1

        Repeater {
            objectName: "tokenStripBars"
            model: EngineController.recentShares.length

            Rectangle {
                required property int index
                readonly property real share: EngineController.recentShares[index] ?? 0

                width: Math.max(2, (strip.width - EngineController.recentTokens) / EngineController.recentTokens)
                height: strip.height
                color: "#e08a2f"
                radius: 1

                Rectangle {
                    anchors.bottom: parent.bottom
                    width: parent.width
                    height: parent.height * parent.share
                    color: "#2f6fe0"
                    radius: 1
                }
            }
        }
    }
}

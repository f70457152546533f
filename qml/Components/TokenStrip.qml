import QtQuick
import QtQuick.Controls
import Ember
import Ember.App

// The latest tokens, one column each, newest on the right: the part of its active neurons the
// device computed (blue, from the bottom) and the part the CPU did (orange).
Item {
    id: strip

    // Read once per update, not once per column.
    readonly property var shares: EngineController.recentShares

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
            model: strip.shares.length

            Rectangle {
                required property int index
                readonly property real share: strip.shares[index] ?? 0

                width: Math.max(2, (strip.width - EngineController.recentTokens) / EngineController.recentTokens)
                height: strip.height
                color: Theme.activeOnCpu
                radius: 1

                Rectangle {
                    anchors.bottom: parent.bottom
                    width: parent.width
                    height: parent.height * parent.share
                    color: Theme.activeOnDevice
                    radius: 1
                }
            }
        }
    }
}

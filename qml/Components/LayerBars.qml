import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember
import Ember.App

// One bar per layer: the device's hot share (blue) and the CPU's cold share (grey) of the FFN
// neurons, with the neurons active for the latest token drawn on top on the side that ran them.
ListView {
    id: bars

    objectName: "layerBars"
    clip: true
    spacing: 3
    model: EngineController.layers
    Accessible.role: Accessible.Chart
    Accessible.name: qsTr("Neuron split per layer")

    delegate: Item {
        id: row

        required property int index
        required property int neurons
        required property int hot
        required property int active
        required property int activeOnDevice

        width: ListView.view.width
        height: 14

        Label {
            id: name

            width: 28
            text: row.index
            font.pointSize: 7
            color: Theme.mutedText
        }
        Rectangle {
            id: track

            anchors.left: name.right
            anchors.right: parent.right
            height: parent.height
            color: Theme.cold
            radius: 2

            Rectangle {
                width: row.neurons > 0 ? track.width * row.hot / row.neurons : 0
                height: parent.height
                color: Theme.hot
                radius: 2
            }
            Rectangle {
                width: row.neurons > 0 ? track.width * row.activeOnDevice / row.neurons : 0
                height: parent.height / 2
                anchors.verticalCenter: parent.verticalCenter
                color: Theme.activeOnDevice
            }
            Rectangle {
                x: row.neurons > 0 ? track.width * row.hot / row.neurons : 0
                width: row.neurons > 0 ? track.width * (row.active - row.activeOnDevice) / row.neurons : 0
                height: parent.height / 2
                anchors.verticalCenter: parent.verticalCenter
                color: Theme.activeOnCpu
            }
        }
    }
}

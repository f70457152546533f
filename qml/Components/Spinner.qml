import QtQuick
import QtQuick.Controls

// A busy indicator that costs nothing while it is not running. Fusion's BusyIndicator keeps its
// rotation going whenever it is visible, running or not (it only fades out), so the window redraws
// 60 times a second for as long as it is on screen, idle or streaming; on a machine without a GPU
// that takes a core's worth from the engine. This one keeps its place in a layout and hides the
// indicator while it is stopped.
Item {
    id: spinner

    property bool running: false

    implicitWidth: 24
    implicitHeight: 24

    BusyIndicator {
        anchors.fill: parent
        running: spinner.running
        visible: spinner.running
    }
}

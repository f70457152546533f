import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// ‹ n/m › under a message that has alternatives (regenerated or edited).
RowLayout {
    id: switcher

    required property int row
    required property int siblingIndex
    required property int siblingCount

    spacing: 0

    ToolButton {
        icon.source: Theme.icon("chevron-left")
        icon.color: palette.buttonText
        icon.width: Theme.iconSize
        icon.height: Theme.iconSize
        enabled: switcher.siblingIndex > 0 && !ChatController.generating
        onClicked: ChatController.showSibling(switcher.row, -1)
        Accessible.name: qsTr("Previous version")
    }
    Label {
        text: qsTr("%1/%2").arg(switcher.siblingIndex + 1).arg(switcher.siblingCount)
        Accessible.name: qsTr("Version %1 of %2").arg(switcher.siblingIndex + 1).arg(switcher.siblingCount)
    }
    ToolButton {
        icon.source: Theme.icon("chevron-right")
        icon.color: palette.buttonText
        icon.width: Theme.iconSize
        icon.height: Theme.iconSize
        enabled: switcher.siblingIndex + 1 < switcher.siblingCount && !ChatController.generating
        onClicked: ChatController.showSibling(switcher.row, 1)
        Accessible.name: qsTr("Next version")
    }
}

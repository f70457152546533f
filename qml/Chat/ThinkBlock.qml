import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// A <think> section: folded behind one line until the user opens it.
ColumnLayout {
    id: root

    property var block: ({})
    property bool expanded: false

    objectName: "thinkBlock"
    spacing: 2

    Button {
        objectName: "thinkToggle"
        flat: true
        text: root.block.open ? qsTr("Thinking…") : qsTr("Thoughts")
        icon.source: Theme.icon(root.expanded ? "chevron-down" : "chevron-right")
        icon.color: palette.buttonText
        icon.width: Theme.iconSize
        icon.height: Theme.iconSize
        onClicked: root.expanded = !root.expanded
        Accessible.name: root.expanded ? qsTr("Hide the model's thoughts") : qsTr("Show the model's thoughts")
    }
    TextEdit {
        objectName: "thinkText"
        Layout.fillWidth: true
        visible: root.expanded
        text: root.block.text ?? ""
        textFormat: TextEdit.MarkdownText
        wrapMode: Text.Wrap
        readOnly: true
        selectByMouse: true
        color: Theme.mutedText
        Accessible.role: Accessible.StaticText
        Accessible.name: text
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

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
        text: (root.expanded ? "▾ " : "▸ ") + (root.block.open ? qsTr("Thinking…") : qsTr("Thoughts"))
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
        color: palette.windowText
        opacity: 0.75
        Accessible.role: Accessible.StaticText
        Accessible.name: text
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// A fenced code block: its language, the code highlighted, and a Copy button.
Rectangle {
    id: root

    property var block: ({})
    property bool copied: false

    // Only a block whose code changed is laid out again.
    function sync() {
        if ((block.html ?? "") === code.source)
            return;
        code.source = block.html ?? "";
        code.text = code.source;
    }

    onBlockChanged: sync()
    Component.onCompleted: sync()

    objectName: "codeBlock"
    implicitWidth: Math.max(code.implicitWidth, header.implicitWidth) + 16
    implicitHeight: column.implicitHeight + 12
    radius: 6
    color: Theme.base
    border.color: Theme.border

    ColumnLayout {
        id: column

        anchors.fill: parent
        anchors.margins: 6
        spacing: 2

        RowLayout {
            id: header

            Layout.fillWidth: true
            Label {
                text: root.block.language || qsTr("code")
                font.pointSize: 8
                color: Theme.mutedText
            }
            Item { Layout.fillWidth: true }
            Button {
                objectName: "copyCodeButton"
                flat: true
                text: root.copied ? qsTr("Copied") : qsTr("Copy")
                font.pointSize: 8
                onClicked: {
                    ChatController.copyText(root.block.text);
                    root.copied = true;
                }
                Accessible.name: qsTr("Copy code")
            }
        }
        TextEdit {
            id: code

            objectName: "codeText"
            Layout.fillWidth: true
            property string source

            textFormat: TextEdit.RichText
            font.family: "monospace"
            wrapMode: Text.Wrap
            readOnly: true
            selectByMouse: true
            color: palette.windowText
            Accessible.role: Accessible.StaticText
            Accessible.name: qsTr("Code: %1").arg(root.block.text ?? "")
        }
    }
}

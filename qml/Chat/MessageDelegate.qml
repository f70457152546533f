import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: delegate

    required property int index
    required property string role
    required property string content
    required property bool generating
    required property string stats
    required property int siblingIndex
    required property int siblingCount

    implicitHeight: bubble.implicitHeight

    Rectangle {
        id: bubble

        x: delegate.role === "user" ? delegate.width - width - 16 : 16
        width: Math.min(delegate.width * 0.8, text.implicitWidth + 24)
        implicitHeight: column.implicitHeight + 16
        radius: 8
        color: delegate.role === "user" ? Qt.rgba(0.25, 0.5, 0.9, 0.18) : Qt.rgba(0.5, 0.5, 0.5, 0.12)

        ColumnLayout {
            id: column

            anchors.fill: parent
            anchors.margins: 8
            spacing: 4

            TextEdit {
                id: text

                Layout.fillWidth: true
                text: delegate.content.length > 0 || !delegate.generating ? delegate.content : "…"
                wrapMode: Text.Wrap
                readOnly: true
                selectByMouse: true
                textFormat: TextEdit.PlainText
                color: palette.windowText
                Accessible.role: Accessible.StaticText
                Accessible.name: (delegate.role === "user" ? qsTr("You: ") : qsTr("Model: ")) + delegate.content
            }
            SiblingSwitch {
                visible: delegate.siblingCount > 1
                row: delegate.index
                siblingIndex: delegate.siblingIndex
                siblingCount: delegate.siblingCount
            }
            Label {
                visible: delegate.stats.length > 0
                text: delegate.stats
                font.pointSize: 8
                opacity: 0.6
            }
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// One chat in the sidebar: click opens it; the buttons pin, rename (in place) and delete it.
RowLayout {
    id: row

    required property double chatId
    required property string title
    required property bool pinned

    property bool editing: false

    function commitRename() {
        HistoryController.renameChat(row.chatId, titleField.text);
        row.editing = false;
    }

    spacing: 0

    ItemDelegate {
        Layout.fillWidth: true
        visible: !row.editing
        text: row.title
        highlighted: ChatController.chatId === row.chatId
        onClicked: HistoryController.openChat(row.chatId)
        Accessible.name: qsTr("Open %1").arg(row.title)
    }
    TextField {
        id: titleField

        Layout.fillWidth: true
        visible: row.editing
        text: row.title
        onAccepted: row.commitRename()
        Keys.onEscapePressed: row.editing = false
        Accessible.name: qsTr("Chat title")
    }
    ToolButton {
        icon.source: Theme.icon(row.pinned ? "pinned" : "pin")
        icon.color: palette.buttonText
        icon.width: Theme.iconSize
        icon.height: Theme.iconSize
        onClicked: HistoryController.togglePin(row.chatId)
        ToolTip.visible: hovered
        ToolTip.text: Accessible.name
        Accessible.name: row.pinned ? qsTr("Unpin %1").arg(row.title) : qsTr("Pin %1").arg(row.title)
    }
    ToolButton {
        icon.source: Theme.icon("edit")
        icon.color: palette.buttonText
        icon.width: Theme.iconSize
        icon.height: Theme.iconSize
        onClicked: {
            row.editing = true;
            titleField.forceActiveFocus();
            titleField.selectAll();
        }
        ToolTip.visible: hovered
        ToolTip.text: Accessible.name
        Accessible.name: qsTr("Rename %1").arg(row.title)
    }
    ToolButton {
        icon.source: Theme.icon("delete")
        icon.color: palette.buttonText
        icon.width: Theme.iconSize
        icon.height: Theme.iconSize
        enabled: !(ChatController.generating && ChatController.chatId === row.chatId)
        onClicked: HistoryController.deleteChat(row.chatId)
        ToolTip.visible: hovered
        ToolTip.text: Accessible.name
        Accessible.name: qsTr("Delete %1").arg(row.title)
    }
}

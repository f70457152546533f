import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

Item {
    id: delegate

    objectName: "message" + index

    required property int index
    required property string role
    required property string content
    required property bool generating
    required property string stats
    required property int siblingIndex
    required property int siblingCount
    required property var blocks
    property bool editing: false
    // The message a search hit opened the chat on.
    readonly property bool found: index === ChatController.foundRow

    function saveEdit(text) {
        delegate.editing = false;
        ChatController.editMessage(delegate.index, text);
    }

    implicitHeight: bubble.implicitHeight
    // A screen reader moving through the chat hears who said what, as plain text, and how it ended.
    Accessible.role: Accessible.ListItem
    Accessible.name: (delegate.role === "user" ? qsTr("You: ") : qsTr("Model: ")) + delegate.content
                     + (delegate.stats.length > 0 ? " (" + delegate.stats + ")" : "")
    // Turns left out of the model's context stay readable, dimmed.
    opacity: index < ChatController.contextStart ? 0.45 : 1

    Rectangle {
        id: bubble

        // The list's readable width; the warm-up copies outside any list take 80 % of their own.
        readonly property real widest: delegate.ListView.view ? delegate.ListView.view.bubbleWidth : delegate.width * 0.8

        objectName: "bubble"
        x: delegate.role === "user" ? delegate.width - width - 16 : 16
        width: delegate.editing ? widest : Math.min(widest, column.implicitWidth + 2 * (Theme.spacing + 2))
        implicitHeight: column.implicitHeight + 2 * Theme.spacing + 4
        radius: Theme.radius
        color: delegate.role === "user" ? Theme.userBubble : Theme.alternate
        border.width: delegate.found ? 2 : 0
        border.color: palette.highlight

        ColumnLayout {
            id: column

            anchors.fill: parent
            anchors.margins: Theme.spacing + 2
            spacing: Theme.spacingSmall

            // Your messages as typed; answers as Markdown, code blocks and <think> sections.
            TextEdit {
                objectName: "messageText"
                Layout.fillWidth: true
                visible: !delegate.editing && (delegate.role === "user" || delegate.blocks.length === 0)
                // The window's font: the text size setting reaches the messages.
                font: ApplicationWindow.window ? ApplicationWindow.window.font : Qt.application.font
                // Empty while hidden: a streaming answer would otherwise lay out its whole text
                // here, unseen, on every flush.
                text: !visible ? "" : delegate.content.length > 0 || !delegate.generating ? delegate.content : "…"
                wrapMode: Text.Wrap
                readOnly: true
                selectByMouse: true
                textFormat: TextEdit.PlainText
                color: palette.windowText
                Accessible.role: Accessible.StaticText
                Accessible.name: !visible ? "" : (delegate.role === "user" ? qsTr("You: ") : qsTr("Model: ")) + delegate.content
            }
            Repeater {
                // A count, not the array: a streamed token re-binds the last block's text instead
                // of re-creating every block.
                model: delegate.role === "user" || delegate.editing ? 0 : delegate.blocks.length

                Loader {
                    id: loader

                    required property int index
                    readonly property var block: delegate.blocks[index] ?? ({})

                    Layout.fillWidth: true
                    sourceComponent: block.kind === "code" ? codeBlock : block.kind === "think" ? thinkBlock : textBlock

                    Component {
                        id: textBlock

                        TextBlock {
                            block: loader.block
                            streaming: delegate.generating && loader.index === delegate.blocks.length - 1
                        }
                    }
                    Component {
                        id: codeBlock

                        CodeBlock { block: loader.block }
                    }
                    Component {
                        id: thinkBlock

                        ThinkBlock { block: loader.block }
                    }
                }
            }
            // Editing: the text in place; the edit becomes a sibling of this message. Made only
            // while editing, so an ordinary message costs no editor.
            Loader {
                Layout.fillWidth: true
                active: delegate.editing
                visible: active

                sourceComponent: ColumnLayout {
                    TextArea {
                        id: editor

                        objectName: "messageEditor"
                        Layout.fillWidth: true
                        text: delegate.content
                        wrapMode: TextEdit.Wrap
                        Component.onCompleted: forceActiveFocus()
                        Keys.onPressed: event => {
                            if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && (event.modifiers & Qt.ControlModifier)) {
                                delegate.saveEdit(editor.text);
                                event.accepted = true;
                            }
                        }
                        Keys.onEscapePressed: delegate.editing = false
                        Accessible.name: qsTr("Edit the message")
                    }
                    RowLayout {
                        Button {
                            objectName: "saveEditButton"
                            text: delegate.role === "user" ? qsTr("Save and send") : qsTr("Save")
                            enabled: editor.text.trim().length > 0
                            onClicked: delegate.saveEdit(editor.text)
                            ToolTip.visible: hovered
                            ToolTip.text: qsTr("Ctrl+Enter")
                        }
                        Button {
                            objectName: "cancelEditButton"
                            text: qsTr("Cancel")
                            onClicked: delegate.editing = false
                        }
                    }
                }
            }
            RowLayout {
                visible: !delegate.editing
                spacing: 0

                // Made only for a message with alternatives: most have none, and every row
                // made costs the frame that shows it.
                Loader {
                    active: delegate.siblingCount > 1
                    visible: active
                    sourceComponent: SiblingSwitch {
                        row: delegate.index
                        siblingIndex: delegate.siblingIndex
                        siblingCount: delegate.siblingCount
                    }
                }
                // Made once the message is complete: an answer being written has no buttons, and
                // the frame that shows a new answer need not make them.
                Loader {
                    active: !delegate.generating
                    visible: active
                    sourceComponent: RowLayout {
                        spacing: 0

                        ToolButton {
                            objectName: "editButton"
                            icon.source: Theme.icon("edit")
                            icon.color: palette.buttonText
                            icon.width: Theme.iconSize
                            icon.height: Theme.iconSize
                            enabled: !ChatController.generating
                            onClicked: delegate.editing = true
                            ToolTip.visible: hovered
                            ToolTip.text: qsTr("Edit")
                            Accessible.name: qsTr("Edit the message")
                        }
                        ToolButton {
                            objectName: "copyMessageButton"
                            icon.source: Theme.icon("copy")
                            icon.color: palette.buttonText
                            icon.width: Theme.iconSize
                            icon.height: Theme.iconSize
                            // The text as stored: an answer's Markdown source, a question as typed.
                            onClicked: {
                                ChatController.copyText(delegate.content);
                                copiedTip.restart();
                            }
                            ToolTip.visible: hovered || copiedTip.running
                            ToolTip.text: copiedTip.running ? qsTr("Copied") : qsTr("Copy as Markdown")
                            Accessible.name: qsTr("Copy the message as Markdown")

                            Timer {
                                id: copiedTip

                                interval: 1500
                            }
                        }
                    }
                }
            }
            Label {
                visible: delegate.stats.length > 0
                text: delegate.stats
                font.pointSize: 8
                color: Theme.mutedText
            }
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

ToolBar {
    id: composer

    function submit() {
        if (input.text.length === 0)
            return;
        ChatController.send(input.text);
        input.clear();
    }

    // Typing goes to the message box at start and again after a dialog closes.
    function focusMessage() { input.forceActiveFocus(); }
    Component.onCompleted: focusMessage()

    ChatSettings {
        id: chatSettings
        onClosed: composer.focusMessage()
    }
    Shortcut {
        sequence: "Ctrl+,"
        onActivated: chatSettings.open()
    }

    implicitHeight: rows.implicitHeight + 16
    background: Rectangle {
        color: Theme.base
    }

    // The message and Send on top; the context meter and the chat's other actions under it.
    ColumnLayout {
        id: rows

        anchors.fill: parent
        anchors.margins: 8
        spacing: 4

        RowLayout {
            spacing: 8

            // The message grows with its lines up to about eight, then scrolls. Enter sends,
            // Shift+Enter starts a new line; pasted text keeps its lines.
            ScrollView {
                objectName: "promptBox"
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(input.implicitHeight,
                                                 8 * lineMetrics.height + input.topPadding + input.bottomPadding)
                ScrollBar.horizontal.policy: ScrollBar.AlwaysOff
                // A rounded field whose edge turns to the accent while it has the keyboard; a
                // field without a model to answer looks switched off.
                background: Rectangle {
                    radius: Theme.radius
                    color: input.enabled ? Theme.base : Theme.alternate
                    border.color: input.activeFocus ? Theme.accent : Theme.border
                    border.width: input.activeFocus ? 2 : 1
                }

                FontMetrics {
                    id: lineMetrics
                    font: input.font
                }

                TextArea {
                    id: input

                    readonly property bool usable: EngineController.status === EngineController.Ready
                                                   || EngineController.status === EngineController.Generating

                    objectName: "promptInput"
                    background: null
                    leftPadding: Theme.spacing + 4
                    rightPadding: Theme.spacing + 4
                    wrapMode: TextEdit.Wrap
                    focus: true
                    enabled: usable
                    placeholderText: usable ? qsTr("Message (Enter to send, Shift+Enter for a new line, Esc to stop)")
                                   : EngineController.status === EngineController.Loading ? qsTr("Loading the model…")
                                   : qsTr("No model loaded — choose one in Models")
                    Accessible.name: qsTr("Message")
                    Keys.onPressed: (event) => {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && !(event.modifiers & Qt.ShiftModifier)) {
                            composer.submit();
                            event.accepted = true;
                        }
                    }
                }
            }
            Button {
                objectName: "sendButton"
                text: ChatController.generating ? qsTr("Stop") : qsTr("Send")
                highlighted: !ChatController.generating
                onClicked: ChatController.generating ? ChatController.stop() : composer.submit()
            }
        }
        RowLayout {
            spacing: 4

            // The context meter: how much of the model's context the conversation fills. A full
            // context ends the answer and asks what to do (ChatView's bar).
            RowLayout {
                objectName: "contextMeter"
                spacing: 4
                visible: EngineController.contextSize > 0
                Accessible.name: qsTr("Context: %1 of %2 tokens").arg(ChatController.contextTokens).arg(EngineController.contextSize)

                ProgressBar {
                    Layout.preferredWidth: 80
                    from: 0
                    to: Math.max(1, EngineController.contextSize)
                    value: ChatController.contextTokens
                }
                Label {
                    objectName: "contextLabel"
                    text: qsTr("%1 / %2 tokens").arg(ChatController.contextTokens).arg(EngineController.contextSize)
                    color: Theme.mutedText
                }
            }
            Item { Layout.fillWidth: true }
            Button {
                objectName: "copyChatButton"
                flat: true
                // "Copied" for a moment: the clipboard shows nothing of itself.
                text: copiedTimer.running ? qsTr("Copied") : qsTr("Copy chat")
                enabled: !ChatController.generating && ChatController.messages.count > 0
                onClicked: {
                    ChatController.copyConversation();
                    copiedTimer.restart();
                }
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Copy the conversation as Markdown (Ctrl+Shift+C)")

                Timer {
                    id: copiedTimer

                    interval: 1500
                }
            }
            Button {
                objectName: "chatSettingsButton"
                flat: true
                text: qsTr("Settings")
                onClicked: chatSettings.open()
                ToolTip.visible: hovered
                ToolTip.text: qsTr("System prompt and sampling for this chat (Ctrl+,)")
            }
            Button {
                objectName: "regenerateButton"
                flat: true
                text: qsTr("Regenerate")
                enabled: !ChatController.generating && ChatController.messages.count > 0
                onClicked: ChatController.regenerate()
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Answer the last question again")
            }
        }
    }
}

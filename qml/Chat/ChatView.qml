import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

Pane {
    id: view

    function focusMessage() { composer.focusMessage(); }

    FontMetrics {
        id: textMetrics
        font: ApplicationWindow.window ? ApplicationWindow.window.font : Qt.application.font
    }

    padding: 0
    // The conversation on the base surface, between the window-coloured sidebars.
    background: Rectangle {
        color: Theme.base
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ListView {
            id: list

            // Bubbles no wider than about 90 characters of text: lines stay readable on a wide screen.
            readonly property real bubbleWidth: Math.min(width * 0.8, 90 * textMetrics.averageCharacterWidth + 2 * (Theme.spacing + 2))

            objectName: "messageList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 8
            // Spacers in the content, not margins: following scrolls to the content's end.
            header: Item {
                height: 12
            }
            footer: Item {
                height: 12
            }
            model: ChatController.messages
            delegate: MessageDelegate {
                width: ListView.view.width
            }
            // The end of the chat stays in view as an answer streams, until the user scrolls up
            // to read; scrolling back down to the end, a new question or another chat follows
            // again. A search hit's message is scrolled to instead, once the rows are laid out.
            // Following moves the content, after the list's layout pass, to the end of the rows
            // it has: positionViewAtEnd() there re-lays the list out from estimated row heights,
            // rows made short grow, the end moves, and the list re-creates its rows without end.
            property bool following: true

            function follow() {
                if (following && !moving && ChatController.foundRow < 0)
                    contentY = Math.max(originY, originY + contentHeight - height);
            }

            onContentHeightChanged: Qt.callLater(follow)
            onOriginYChanged: Qt.callLater(follow)
            onHeightChanged: Qt.callLater(follow)
            onMovementStarted: following = false
            onMovementEnded: following = atYEnd
            // Another chat: the list empties first.
            onCountChanged: if (count === 0) following = true
            ScrollBar.vertical: ScrollBar {
                onPressedChanged: list.following = !pressed && list.atYEnd
            }

            Connections {
                target: ChatController
                function onQuestionSaved() {
                    list.following = true;
                    Qt.callLater(list.follow);
                }
                function onFoundRowChanged() {
                    if (ChatController.foundRow >= 0)
                        Qt.callLater(() => list.positionViewAtIndex(ChatController.foundRow, ListView.Center));
                }
            }
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Conversation")

            Label {
                anchors.centerIn: parent
                visible: list.count === 0
                text: EngineController.status === EngineController.Ready ? qsTr("Write the start of a text; the model continues it.")
                                                          : qsTr("Loading the model…")
                color: Theme.mutedText
            }
        }

        // A file that did not load says so here, in full, with what runs instead.
        Pane {
            objectName: "loadErrorBar"
            Layout.fillWidth: true
            visible: EngineController.loadError.length > 0

            RowLayout {
                anchors.fill: parent

                Label {
                    objectName: "loadErrorText"
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    color: Theme.error
                    text: EngineController.loadError
                }
                Button {
                    text: qsTr("Dismiss")
                    onClicked: EngineController.dismissLoadError()
                }
            }
        }

        // A full context is never cut silently: the user decides.
        Pane {
            objectName: "contextFullBar"
            Layout.fillWidth: true
            visible: ChatController.contextFull && !ChatController.generating

            RowLayout {
                anchors.fill: parent

                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    text: qsTr("The conversation fills the model's context (%1 tokens), so the answer stopped.")
                          .arg(EngineController.contextSize)
                }
                Button {
                    objectName: "dropOldestTurnButton"
                    text: qsTr("Leave out the oldest turn")
                    onClicked: ChatController.dropOldestTurn()
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("The model no longer sees the first question and its answer (they stay here) and answers again")
                }
                Button {
                    text: qsTr("New chat")
                    onClicked: ChatController.newChat()
                }
            }
        }
        Composer {
            id: composer

            Layout.fillWidth: true
        }
    }

    // The first message rows cost several times later ones (types loaded, bindings compiled):
    // a question and an answer row are made once, asynchronously and unseen, while the chat is
    // still empty, so the frame after the first send stays within 16 ms.
    Loader {
        id: warmUp

        asynchronous: true
        visible: false
        active: list.count === 0
        onLoaded: active = false
        sourceComponent: Column {
            width: view.width

            MessageDelegate {
                width: view.width
                index: 0
                role: "user"
                content: "?"
                generating: false
                stats: ""
                siblingIndex: 0
                siblingCount: 1
                blocks: []
            }
            MessageDelegate {
                width: view.width
                index: 1
                role: "assistant"
                content: "…"
                generating: true
                stats: ""
                siblingIndex: 0
                siblingCount: 1
                blocks: [{kind: "text", text: "…", language: "", html: "", open: false}]
            }
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// Ctrl+K: search every chat as you type; choosing a hit opens its chat on the matching branch.
Popup {
    id: popup

    function choose(row: int) {
        HistoryController.openSearchHit(row);
        popup.close();
    }

    objectName: "searchPopup"
    modal: true
    // The window dims behind it.
    Overlay.modal: Rectangle {
        color: Theme.scrim
    }
    focus: true
    anchors.centerIn: Overlay.overlay
    width: Math.min(640, popup.parent ? popup.parent.width - 40 : 640)
    height: Math.min(480, popup.parent ? popup.parent.height - 40 : 480)
    onOpened: {
        field.clear();
        field.forceActiveFocus();
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8

        TextField {
            id: field

            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search all chats")
            onTextChanged: HistoryController.search(text)
            onAccepted: if (hits.count > 0) popup.choose(0)
            Accessible.name: qsTr("Search all chats")
        }

        ListView {
            id: hits

            objectName: "searchHits"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: HistoryController.searchHits
            delegate: SearchHitDelegate {
                width: ListView.view.width
                onChosen: row => popup.choose(row)
            }
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Search results")

            Label {
                anchors.centerIn: parent
                visible: hits.count === 0 && field.text.length > 0
                text: qsTr("No matches")
                color: Theme.mutedText
            }
        }
    }
}

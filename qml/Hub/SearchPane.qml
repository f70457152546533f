import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember
import Ember.App

// Search the Hub (PowerInfer's repos first), sort, or open a repo by id or URL.
ColumnLayout {
    id: pane

    function runSearch() {
        HubController.search(query.text, sort.currentValue);
    }

    spacing: 6

    Label {
        text: qsTr("Search Hugging Face")
        font.bold: true
    }
    RowLayout {
        Layout.fillWidth: true

        TextField {
            id: query

            objectName: "hubSearchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Model name, e.g. llama")
            Accessible.name: qsTr("Search models")
            onAccepted: pane.runSearch()
        }
        Button {
            objectName: "hubSearchButton"
            text: qsTr("Search")
            Accessible.name: qsTr("Search")
            onClicked: pane.runSearch()
        }
    }
    RowLayout {
        Layout.fillWidth: true

        Label {
            text: qsTr("Sort by")
        }
        ComboBox {
            id: sort

            objectName: "hubSortBox"
            Layout.fillWidth: true
            textRole: "text"
            valueRole: "value"
            model: [
                { value: "downloads", text: qsTr("Downloads") },
                { value: "likes", text: qsTr("Likes") },
                { value: "updated", text: qsTr("Recently updated") }
            ]
            Accessible.name: qsTr("Sort results by")
            onActivated: pane.runSearch()
        }
        Spinner {
            running: HubController.searching
        }
    }
    Label {
        Layout.fillWidth: true
        visible: HubController.searchError.length > 0
        text: HubController.searchError
        wrapMode: Text.Wrap
        color: Theme.error
    }
    ListView {
        id: results

        objectName: "hubResults"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: HubController.searchResults
        delegate: SearchResultDelegate {
            width: ListView.view.width
        }
        Accessible.role: Accessible.List
        Accessible.name: qsTr("Search results")

        Label {
            anchors.centerIn: parent
            visible: results.count === 0 && !HubController.searching
            text: qsTr("Search to list models")
            color: Theme.mutedText
        }
    }
    Label {
        text: qsTr("Open a repo")
        font.bold: true
    }
    RowLayout {
        Layout.fillWidth: true

        TextField {
            id: repoInput

            objectName: "repoInput"
            Layout.fillWidth: true
            placeholderText: qsTr("owner/name or a Hub URL")
            Accessible.name: qsTr("Repo to open")
            onAccepted: HubController.openRepo(repoInput.text)
        }
        Button {
            text: qsTr("Open")
            Accessible.name: qsTr("Open repo")
            onClicked: HubController.openRepo(repoInput.text)
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// The Serve switch: the loaded model as an OpenAI-compatible API on this computer, for editors,
// agents and scripts. Requests show here as they finish; they never enter the chat history.
ColumnLayout {
    spacing: 6

    Label {
        text: qsTr("Local API")
        font.bold: true
    }
    Switch {
        objectName: "serveSwitch"
        text: ServeController.serving ? qsTr("Serving on localhost") : qsTr("Serve on localhost")
        checked: ServeController.serving
        onToggled: checked ? ServeController.start() : ServeController.stop()
        Accessible.name: qsTr("Serve the model as an OpenAI-compatible API on localhost")
        ToolTip.visible: hovered
        ToolTip.text: qsTr("Other programs on this computer can use the loaded model through the OpenAI API")
    }
    RowLayout {
        Layout.fillWidth: true
        enabled: !ServeController.serving
        Label { text: qsTr("Port") }
        SpinBox {
            objectName: "servePortBox"
            from: 1024
            to: 65535
            editable: true
            value: AppSettings.servePort
            // No thousands separator in a port number.
            textFromValue: (value, locale) => String(value)
            valueFromText: (text, locale) => parseInt(text)
            onValueModified: AppSettings.servePort = value
            Accessible.name: qsTr("Port")
        }
        TextField {
            objectName: "serveKeyField"
            Layout.fillWidth: true
            placeholderText: qsTr("API key (optional)")
            text: AppSettings.serveApiKey
            echoMode: TextInput.PasswordEchoOnEdit
            onEditingFinished: AppSettings.serveApiKey = text
            Accessible.name: qsTr("API key clients must send")
        }
    }
    CheckBox {
        objectName: "serveKeepsChatsBox"
        text: qsTr("Keep API chats in the history")
        checked: AppSettings.serveKeepsChats
        onToggled: AppSettings.serveKeepsChats = checked
        Accessible.name: qsTr("Keep chats that come through the API in the chat history")
    }
    RowLayout {
        Layout.fillWidth: true
        visible: ServeController.serving
        Label {
            objectName: "serveUrlLabel"
            Layout.fillWidth: true
            text: ServeController.url
            elide: Text.ElideRight
            font.family: "monospace"
        }
        Button {
            text: qsTr("Copy")
            onClicked: ServeController.copyUrl()
            Accessible.name: qsTr("Copy the API's address")
        }
    }
    Label {
        Layout.fillWidth: true
        visible: ServeController.error.length > 0
        wrapMode: Text.Wrap
        color: Theme.error
        text: ServeController.error
    }
    Label {
        objectName: "serveRequestsLabel"
        Layout.fillWidth: true
        visible: ServeController.serving
        wrapMode: Text.Wrap
        color: Theme.mutedText
        text: ServeController.requestCount === 0
              ? qsTr("No requests yet")
              : qsTr("%n request(s)", "", ServeController.requestCount) + "\n"
                + ServeController.recentRequests.slice(0, 3).join("\n")
    }
}

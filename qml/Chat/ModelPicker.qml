import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// The model the chat talks to, chosen here from the library as in the Models tab: each file with
// its fit on this computer; a file Ember cannot run says why and is not offered.
ComboBox {
    id: picker

    objectName: "modelPicker"
    model: HubController.library
    textRole: "file"
    valueRole: "path"
    enabled: count > 0 && EngineController.status !== EngineController.Loading
    displayText: EngineController.status === EngineController.Loading ? qsTr("Loading…")
                 : EngineController.modelPath.length > 0 ? EngineController.modelName
                 : count > 0 ? qsTr("Choose a model") : qsTr("No models yet: get one in Models")
    Accessible.name: qsTr("Model: %1").arg(displayText)
    ToolTip.visible: hovered
    ToolTip.text: qsTr("The model this chat talks to")

    onActivated: row => HubController.loadModel(row)

    // Wider than the box, so the fit reads whole; right-aligned with it, so it stays in the window.
    popup.width: Math.max(picker.width, 460)
    popup.x: picker.width - picker.popup.width

    delegate: ItemDelegate {
        id: entry

        required property int index
        required property string repo
        required property string file
        required property string path
        required property string fit
        required property string fitText

        width: picker.popup.width
        enabled: entry.fit !== "cannotrun"
        highlighted: entry.path === EngineController.modelPath
        Accessible.name: qsTr("%1, %2").arg(entry.file).arg(entry.fitText)

        contentItem: ColumnLayout {
            spacing: 0

            Label {
                Layout.fillWidth: true
                text: entry.file
                color: entry.highlighted ? Theme.accentText : Theme.text
                elide: Text.ElideMiddle
                font.bold: entry.highlighted
            }
            Label {
                Layout.fillWidth: true
                text: qsTr("%1 · %2").arg(entry.repo).arg(entry.fitText)
                elide: Text.ElideRight
                font.pointSize: 8
                color: entry.highlighted ? Theme.accentText : entry.fit === "cannotrun" || entry.fit === "toolarge" ? Theme.error : Theme.mutedText
            }
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// The open chat's system prompt and sampling settings (Ctrl+,), saved with the chat.
Dialog {
    id: dialog

    objectName: "chatSettings"
    title: qsTr("Chat settings")
    parent: Overlay.overlay
    modal: true
    // The window dims behind it.
    Overlay.modal: Rectangle {
        color: Theme.scrim
    }
    anchors.centerIn: parent
    width: Math.min(parent ? parent.width - 80 : 480, 520)
    standardButtons: Dialog.Close
    // The preview is rendered when the dialog opens and when a setting changes, not per token.
    onOpened: preview.text = ChatController.previewPrompt()

    Connections {
        target: ChatController
        function onSettingsChanged() {
            if (dialog.visible) preview.text = ChatController.previewPrompt();
        }
    }

    component SettingSlider: RowLayout {
        id: row

        required property string label
        required property real from
        required property real to
        required property real stepSize
        required property real value
        required property string help
        signal moved(real value)

        Label {
            text: row.label
            Layout.preferredWidth: 120
        }
        Slider {
            Layout.fillWidth: true
            from: row.from
            to: row.to
            stepSize: row.stepSize
            value: row.value
            onMoved: row.moved(value)
            Accessible.name: row.label
            ToolTip.visible: hovered
            ToolTip.text: row.help
        }
        Label {
            text: row.value.toFixed(2)
            Layout.preferredWidth: 40
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 6

        RowLayout {
            Layout.fillWidth: true

            Label {
                Layout.fillWidth: true
                text: qsTr("System prompt")
            }
            Button {
                objectName: "systemPromptDefault"
                flat: true
                enabled: !ChatController.systemPromptIsDefault
                text: ChatController.systemPromptIsDefault ? qsTr("Default for this model") : qsTr("Make default for this model")
                Accessible.name: qsTr("Start new chats with this model with this system prompt")
                onClicked: ChatController.makeSystemPromptDefault()
            }
        }
        TextArea {
            objectName: "systemPromptField"
            Layout.fillWidth: true
            Layout.preferredHeight: 70
            wrapMode: TextEdit.Wrap
            text: ChatController.systemPrompt
            placeholderText: qsTr("Instructions the model sees before the conversation")
            onEditingFinished: ChatController.systemPrompt = text
            Accessible.name: qsTr("System prompt")
        }
        RowLayout {
            Label {
                text: qsTr("Prompt format")
                Layout.preferredWidth: 120
            }
            ComboBox {
                id: formatBox

                objectName: "promptFormatSetting"
                Layout.fillWidth: true
                readonly property var names: ["", "model", "completion", "llama2", "mistral", "chatml"]
                model: [qsTr("From the model"), qsTr("The model's own chat template"), qsTr("Plain completion"),
                        qsTr("Llama 2 chat"), qsTr("Mistral [INST] (Bamboo)"), qsTr("ChatML")]
                currentIndex: ChatController.promptFormatChosen ? names.indexOf(ChatController.promptFormat) : 0
                onActivated: index => ChatController.promptFormat = names[index]
                Accessible.name: qsTr("Prompt format for this model")
            }
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: ChatController.promptFormatChosen ? qsTr("Chosen for this model; %1").arg(ChatController.detectedFormatWhy)
                                                    : qsTr("From the model: %1").arg(ChatController.detectedFormatWhy)
            color: Theme.mutedText
            font.pixelSize: 11
        }
        Label { text: qsTr("What the model reads") }
        ScrollView {
            Layout.fillWidth: true
            Layout.preferredHeight: 90
            TextArea {
                id: preview

                objectName: "promptPreview"
                readOnly: true
                wrapMode: TextEdit.WrapAnywhere
                font.family: "monospace"
                font.pixelSize: 11
                Accessible.name: qsTr("Preview of the prompt")
            }
        }
        SettingSlider {
            objectName: "temperatureSetting"
            label: qsTr("Temperature")
            from: 0; to: 2; stepSize: 0.05
            value: ChatController.temperature
            help: qsTr("0: always the most likely token; higher: more varied")
            onMoved: v => ChatController.temperature = v
        }
        SettingSlider {
            label: qsTr("Top-p")
            from: 0; to: 1; stepSize: 0.01
            value: ChatController.topP
            help: qsTr("Sample from the smallest set of tokens whose probabilities reach p (1: off)")
            onMoved: v => ChatController.topP = v
        }
        SettingSlider {
            label: qsTr("Min-p")
            from: 0; to: 1; stepSize: 0.01
            value: ChatController.minP
            help: qsTr("Drop tokens less likely than p × the most likely one (0: off)")
            onMoved: v => ChatController.minP = v
        }
        SettingSlider {
            label: qsTr("Repeat penalty")
            from: 1; to: 2; stepSize: 0.01
            value: ChatController.repeatPenalty
            help: qsTr("Make recently used tokens less likely (1: off)")
            onMoved: v => ChatController.repeatPenalty = v
        }
        GridLayout {
            columns: 2
            columnSpacing: 12

            Label { text: qsTr("Top-k") }
            SpinBox {
                from: 0; to: 1000
                value: ChatController.topK
                editable: true
                onValueModified: ChatController.topK = value
                Accessible.name: qsTr("Top-k (0: off)")
            }
            Label { text: qsTr("Max tokens") }
            SpinBox {
                objectName: "maxTokensSetting"
                from: 1; to: 32768
                value: ChatController.maxTokens
                editable: true
                onValueModified: ChatController.maxTokens = value
                Accessible.name: qsTr("Most tokens per answer")
            }
            Label { text: qsTr("Context") }
            RowLayout {
                SpinBox {
                    objectName: "contextLengthSetting"
                    from: 256; to: 131072
                    stepSize: 256
                    value: ChatController.contextLength
                    editable: true
                    onValueModified: ChatController.contextLength = value
                    Accessible.name: qsTr("Context length in tokens")
                }
                Label {
                    objectName: "contextCost"
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    text: qsTr("tokens · KV cache %1").arg(HubController.formatBytes(ChatController.contextLength * EngineController.kvBytesPerToken))
                          + (EngineController.trainedContext > 0 && ChatController.contextLength > EngineController.trainedContext
                             ? qsTr(" · beyond the %1 tokens this model was trained for").arg(EngineController.trainedContext) : "")
                    color: Theme.mutedText
                }
            }
            Label { text: qsTr("Seed") }
            RowLayout {
                SpinBox {
                    from: -1; to: 2147483647
                    value: ChatController.seed
                    editable: true
                    onValueModified: ChatController.seed = value
                    Accessible.name: qsTr("Seed (-1: random)")
                }
                Label {
                    text: ChatController.seed < 0 ? qsTr("random") : qsTr("fixed: answers repeat")
                    color: Theme.mutedText
                }
            }
        }
    }
}

import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// Speed against exactness for a dense model that ember-calibrate calibrated: the level of
// activation sparsity, each choice with the cost measured on held-out text and, where measured,
// the speed it generated at on this computer's CPU. A dense model without
// a calibration is measured in the background (EngineController.calibration), with its progress
// here and a way to stop or start it.
ColumnLayout {
    id: setting

    readonly property var levels: EngineController.sparsityLevels
    // "Off" first, then every measured level: short enough for the panel's width; the chosen
    // one's details in the line below.
    readonly property bool speedMeasured: levels.length > 0 && levels[0].speed > 0
    readonly property var choices: {
        const list = [{ text: qsTr("Off: exact"), level: 0,
                        detail: speedMeasured && EngineController.recommendedSparsity === 0
                                ? qsTr("No level within 1 % of the exact perplexity generated faster than exact on this computer's CPU.")
                                : "" }];
        for (const l of levels) {
            // "Suggested" next to the level: a narrow panel elides the end of the line, and the
            // detail line below repeats the speed.
            const suggested = Math.abs(l.level - EngineController.recommendedSparsity) < 1e-6;
            let text = (suggested ? qsTr("Skip %1 % (suggested): perplexity %2 %") : qsTr("Skip %1 %: perplexity %2 %"))
                       .arg(Math.round(l.level * 100))
                       .arg((l.pplIncrease >= 0 ? "+" : "") + (l.pplIncrease * 100).toFixed(1));
            if (l.speed > 0)
                text += qsTr(", %1× speed").arg(l.speed.toFixed(2));
            let detail = qsTr("Skips %1 % of the FFN neurons; the next token is the exact model's %2 % of the time (measured on held-out text).")
                         .arg(Math.round(l.level * 100)).arg((l.sameTop * 100).toFixed(0));
            if (l.speed > 0)
                detail += " " + qsTr("Generating on this computer's CPU, it ran at %1 times the exact model's speed.").arg(l.speed.toFixed(2));
            list.push({ text: text, level: l.level, detail: detail });
        }
        return list;
    }

    readonly property var calibration: EngineController.calibration

    visible: levels.length > 0 || EngineController.sparsityNote.length > 0 || calibration.running
             || calibration.available
    spacing: 4

    Label {
        text: qsTr("Activation sparsity")
        font.bold: true
    }
    ComboBox {
        id: combo

        objectName: "sparsityCombo"
        Layout.fillWidth: true
        visible: setting.levels.length > 0
        enabled: EngineController.status === EngineController.Ready
        model: setting.choices
        textRole: "text"
        // Set after each new list of choices: a ComboBox resets its index when its model changes,
        // which would break a binding and show "Off" for a model running sparse.
        function chosenIndex() {
            for (let i = 0; i < setting.choices.length; ++i)
                if (Math.abs(setting.choices[i].level - EngineController.activationSparsity) < 1e-6)
                    return i;
            return 0;
        }
        function showChosen() {
            currentIndex = chosenIndex();
        }
        onModelChanged: Qt.callLater(showChosen)
        Component.onCompleted: showChosen()

        Connections {
            target: EngineController
            function onModelChanged() {
                Qt.callLater(combo.showChosen);
            }
        }
        onActivated: index => EngineController.setActivationSparsity(setting.choices[index].level)
        Accessible.name: qsTr("Activation sparsity: speed against exactness")
        ToolTip.visible: hovered
        ToolTip.text: qsTr("Skips the FFN neurons whose gate barely fires; the cost was measured on held-out text, the speed on this computer's CPU. With a GPU, the often-firing neurons go there.")
    }
    Label {
        objectName: "sparsityDetail"
        Layout.fillWidth: true
        visible: combo.visible && text.length > 0
        wrapMode: Text.Wrap
        text: setting.choices[combo.currentIndex] ? setting.choices[combo.currentIndex].detail : ""
        color: Theme.mutedText
    }
    Label {
        objectName: "calibrationStatus"
        Layout.fillWidth: true
        visible: setting.calibration.running
        wrapMode: Text.Wrap
        text: qsTr("Measuring what skipping neurons costs this model: %1 %. It runs in the background at low priority; the chat goes on.")
              .arg(Math.floor(setting.calibration.progress * 100))
        color: Theme.mutedText
    }
    RowLayout {
        Layout.fillWidth: true
        visible: setting.calibration.running || setting.calibration.available
        spacing: 8

        ProgressBar {
            objectName: "calibrationProgress"
            Layout.fillWidth: true
            visible: setting.calibration.running
            value: setting.calibration.progress
            Accessible.name: qsTr("Measuring activation sparsity")
        }
        Button {
            objectName: "calibrationButton"
            text: setting.calibration.running ? qsTr("Stop") : qsTr("Measure activation sparsity")
            onClicked: setting.calibration.running ? setting.calibration.stop() : setting.calibration.start()
            ToolTip.visible: hovered
            ToolTip.text: setting.calibration.running
                          ? qsTr("Stops measuring; it will not start on its own again for this model.")
                          : qsTr("Runs the model over a calibration text to find which neurons can be skipped and what each level costs (several minutes for a small model).")
        }
    }
    Label {
        objectName: "calibrationNote"
        Layout.fillWidth: true
        visible: text.length > 0
        wrapMode: Text.Wrap
        text: setting.calibration.note
        color: Theme.mutedText
    }
    Label {
        objectName: "sparsityNote"
        Layout.fillWidth: true
        visible: EngineController.sparsityNote.length > 0
        wrapMode: Text.Wrap
        text: EngineController.sparsityNote
        color: Theme.mutedText
    }
}

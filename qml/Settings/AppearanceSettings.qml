import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App

// The app's look: theme (system, light, dark) and text size, applied at once and kept.
ColumnLayout {
    spacing: 10

    Label {
        text: qsTr("Appearance")
        font.bold: true
    }
    RowLayout {
        Label { text: qsTr("Theme") }
        ComboBox {
            objectName: "themeBox"
            Layout.fillWidth: true
            model: [qsTr("System"), qsTr("Light"), qsTr("Dark")]
            readonly property var themes: ["system", "light", "dark"]
            currentIndex: themes.indexOf(AppSettings.theme)
            onActivated: index => AppSettings.theme = themes[index]
            Accessible.name: qsTr("Theme")
        }
    }
    RowLayout {
        Label { text: qsTr("Text size") }
        Slider {
            objectName: "fontScaleSlider"
            Layout.fillWidth: true
            from: 0.8
            to: 1.6
            stepSize: 0.1
            value: AppSettings.fontScale
            onMoved: AppSettings.fontScale = value
            Accessible.name: qsTr("Text size")
        }
    }
}

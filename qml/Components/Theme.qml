pragma Singleton
import QtQuick
import Ember.App

// Ember's visual language in one place: the colours of the light and dark themes, the spacing,
// radii and type sizes every view uses. "system" follows the platform's light or dark, with
// these colours. Every text colour here reads at a contrast of at least 4.5:1 on the window, on
// the base and alternate surfaces and on its own badge tint, in both themes (tst_app_window checks
// it), so no view needs a colour of its own.
QtObject {
    id: theme

    readonly property SystemPalette system: SystemPalette {}
    readonly property bool dark: AppSettings.theme === "dark"
                                 || (AppSettings.theme === "system" && system.window.hslLightness < 0.5)

    // Surfaces, from the window behind everything to the raised cards on it.
    readonly property color window: dark ? "#1c1d20" : "#f4f5f7"
    readonly property color base: dark ? "#26282c" : "#ffffff"        // cards, fields, lists
    readonly property color alternate: dark ? "#303237" : "#eaecef"   // answers, code, hover
    readonly property color border: dark ? "#43474e" : "#d3d6db"
    // The shades Qt's Fusion style draws control edges and grooves with.
    readonly property color bevelLight: dark ? "#4a4d54" : "#ffffff"
    readonly property color bevelMidlight: dark ? "#3a3d43" : "#f0f1f3"
    readonly property color bevelDark: dark ? "#141517" : "#9a9ea5"
    readonly property color scrim: Qt.rgba(0, 0, 0, dark ? 0.6 : 0.4)  // behind a modal dialog

    readonly property color text: dark ? "#e7e8ea" : "#1d1f23"
    readonly property color mutedText: dark ? "#a9aeb6" : "#555a62"    // notes, captions
    readonly property color accent: dark ? "#7fb0ff" : "#1f5fc4"       // links, focus, selection
    readonly property color accentText: dark ? "#10233f" : "#ffffff"     // text on an accent fill
    readonly property color userBubble: dark ? "#25354f" : "#dde8f9"   // the user's messages

    // What a badge or a message means: its text colour, and its fill at badgeTint opacity.
    readonly property color error: dark ? "#ff8a80" : "#b3261e"
    readonly property color success: dark ? "#6fd08c" : "#1e7a3c"
    readonly property color warning: dark ? "#f0b45a" : "#9a5b00"
    readonly property color special: dark ? "#c89af0" : "#7b3fa0"      // rare kinds: KV cache, gated, quantization
    readonly property color neutral: dark ? "#aab3bd" : "#5d6670"
    readonly property real badgeTint: 0.12

    // The split view: neurons resident on the device or left to the CPU, and those that fired.
    readonly property color hot: dark ? Qt.rgba(0.42, 0.62, 1.0, 0.40) : Qt.rgba(0.2, 0.45, 0.9, 0.35)
    readonly property color cold: dark ? Qt.rgba(0.62, 0.64, 0.68, 0.28) : Qt.rgba(0.5, 0.5, 0.5, 0.25)
    readonly property color activeOnDevice: dark ? "#6aa5ff" : "#2f6fe0"
    readonly property color activeOnCpu: dark ? "#f0a04b" : "#d07a1f"

    // Spacing on a 4 px grid, corner radii, and type relative to the body text.
    readonly property int spacingSmall: 4
    readonly property int spacing: 8
    readonly property int spacingLarge: 16
    readonly property int radiusSmall: 4    // badges, buttons
    readonly property int radius: 10        // cards, message bubbles
    readonly property real captionScale: 0.85
    readonly property real titleScale: 1.25
    readonly property int iconSize: 18

    // An icon of qml/icons by name: "edit" is icons/edit.svg.
    function icon(name) {
        return "qrc:/qt/qml/Ember/icons/" + name + ".svg";
    }
}

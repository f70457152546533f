import QtQuick
import QtQuick.Controls

// A small tinted tag: file kind, quantization, gated, loaded.
Label {
    id: badge

    property color tint: "#2f6fe0"

    leftPadding: 6
    rightPadding: 6
    topPadding: 1
    bottomPadding: 1
    font.pointSize: 8
    color: badge.tint
    Accessible.role: Accessible.StaticText
    Accessible.name: badge.text

    background: Rectangle {
        radius: 3
        color: Qt.rgba(badge.tint.r, badge.tint.g, badge.tint.b, 0.12)
        border.color: badge.tint
    }
}

import QtQuick
import QtQuick.Controls
import Ember

// A small tinted tag: file kind, quantization, gated, loaded.
Label {
    id: badge

    property color tint: Theme.accent

    leftPadding: 6
    rightPadding: 6
    topPadding: 1
    bottomPadding: 1
    font.pointSize: 8
    color: badge.tint
    Accessible.role: Accessible.StaticText
    Accessible.name: badge.text

    background: Rectangle {
        radius: Theme.radiusSmall
        color: Qt.rgba(badge.tint.r, badge.tint.g, badge.tint.b, Theme.badgeTint)
        border.color: badge.tint
    }
}

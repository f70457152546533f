import QtQuick
import Ember

// A list row drawn as a card, lighter under the pointer: the Models tab's files and installed
// models.
Rectangle {
    property bool hovered: false

    color: hovered ? Theme.alternate : Theme.base
    radius: Theme.radius
    border.color: Theme.border
}

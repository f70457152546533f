import QtQuick
import QtQuick.Layouts
import Ember

// A raised group of related controls on the window's background: the side panel's sections.
// Its children are laid out in a column as wide as the card, so text wraps inside it.
Rectangle {
    id: card

    default property alias content: column.data
    readonly property int inset: Theme.spacing + Theme.spacingSmall

    implicitHeight: column.implicitHeight + 2 * inset
    color: Theme.base
    radius: Theme.radius
    border.color: Theme.border

    ColumnLayout {
        id: column

        x: card.inset
        y: card.inset
        width: card.width - 2 * card.inset
        spacing: Theme.spacing
    }
}

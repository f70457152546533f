import QtQuick
import Ember

// A model's type: sparse (PowerInfer, hot neurons on the GPU) or dense, and the other file kinds.
Badge {
    id: kindBadge

    required property string kind

    text: kindBadge.kind === "sparse" ? qsTr("sparse") : kindBadge.kind === "dense" ? qsTr("dense")
        : kindBadge.kind === "activation" ? qsTr("activation") : kindBadge.kind === "config" ? qsTr("config")
        : qsTr("other")
    tint: kindBadge.kind === "sparse" ? Theme.warning : kindBadge.kind === "dense" ? Theme.accent : Theme.neutral
}

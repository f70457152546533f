import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember.App
import Ember

// One search hit; clicking it opens the repo's file list.
ItemDelegate {
    id: hit

    required property string repoId
    required property double downloads
    required property double likes
    required property string updated
    required property bool gated
    required property bool pinned

    highlighted: HubController.repoId === hit.repoId
    Accessible.name: qsTr("Open %1").arg(hit.repoId)
    onClicked: HubController.openRepo(hit.repoId)

    contentItem: ColumnLayout {
        spacing: 2

        RowLayout {
            Layout.fillWidth: true

            Label {
                Layout.fillWidth: true
                text: hit.repoId
                color: hit.highlighted ? Theme.accentText : Theme.text
                elide: Text.ElideMiddle
                font.bold: hit.pinned
            }
            Badge {
                visible: hit.pinned
                text: qsTr("PowerInfer")
                tint: Theme.warning
            }
            Badge {
                visible: hit.gated
                text: qsTr("gated")
                tint: Theme.error
            }
        }
        Label {
            text: qsTr("%1 downloads · %2 likes · updated %3").arg(hit.downloads).arg(hit.likes).arg(hit.updated)
            font.pointSize: 8
            color: hit.highlighted ? Theme.accentText : Theme.mutedText
        }
    }
}

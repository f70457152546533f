import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// One search hit: the chat's title over the matching text, matches in bold.
ItemDelegate {
    id: hit

    required property int index
    required property string chatTitle
    required property string snippet

    signal chosen(int row)

    Accessible.name: qsTr("Open %1").arg(hit.chatTitle)
    onClicked: hit.chosen(hit.index)

    contentItem: ColumnLayout {
        spacing: 2

        Label {
            Layout.fillWidth: true
            text: hit.chatTitle
            font.bold: true
            elide: Text.ElideRight
        }
        Label {
            Layout.fillWidth: true
            // Escaped in C++ (snippet_html): only the <b> of the matches is markup.
            text: hit.snippet
            textFormat: Text.StyledText
            wrapMode: Text.Wrap
            maximumLineCount: 3
            elide: Text.ElideRight
            color: Theme.mutedText
        }
    }
}

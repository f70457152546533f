import QtQuick

// Markdown prose of an answer (CommonMark with GitHub's tables and strikethrough, Qt's renderer).
// Every streamed token hands each block a fresh copy; only a block whose text changed is parsed
// again.
TextEdit {
    property var block: ({})
    property string source

    function sync() {
        if ((block.text ?? "") === source)
            return;
        source = block.text ?? "";
        text = source;
    }

    onBlockChanged: sync()
    Component.onCompleted: sync()
    textFormat: TextEdit.MarkdownText
    wrapMode: Text.Wrap
    readOnly: true
    selectByMouse: true
    color: palette.windowText
    onLinkActivated: link => Qt.openUrlExternally(link)
    Accessible.role: Accessible.StaticText
    // The source, not `text`: reading a Markdown TextEdit's text writes its document back out.
    Accessible.name: source
}

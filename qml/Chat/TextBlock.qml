import QtQuick
import QtQuick.Controls

// Markdown prose of an answer (CommonMark with GitHub's tables and strikethrough, Qt's renderer).
// Every streamed token hands each block a fresh copy; only a block whose text changed is parsed
// again.
//
// Qt lays out a changed paragraph whole, so a long paragraph streaming in would cost more with
// every token. While it streams, its lines above the last can no longer change (line breaking is
// greedy), so they move into pieces of their own that are laid out once, and a token re-lays only
// the last few lines. Only plain prose moves (no Markdown markup, no line breaks), where a position
// in the shown text is the same position in the source. When the answer ends or the width
// changes, the block is one text again (so a selection can span it).
Item {
    id: root

    property var block: ({})
    // The window's font, so the text size setting reaches the answers' prose.
    readonly property font textFont: ApplicationWindow.window ? ApplicationWindow.window.font : Qt.application.font
    property bool streaming: false
    property string source      // the block's Markdown
    property int moved: 0       // characters of `source` in the pieces
    property real movedWidth: 0 // their widest line unwrapped: the block does not narrow

    // Lines the live text holds before its upper ones move: few, so a token's layout stays small;
    // not one, so pieces are made only every dozen lines.
    readonly property int liveLines: 12
    // What could make text shown differently from its source: Markdown markup, HTML, escapes,
    // entities, line breaks.
    readonly property var markup: /[*_`\[\]<>&\\!~|#\n\r]/
    // What could start a block construct (list, heading, quote, rule, table) at a piece's start.
    readonly property var blockStart: /^(\s|[-+*#>=|`~]|\d+[.)])/

    function sync() {
        const text = block.text ?? "";
        if (text === source)
            return;
        // While streaming, a block only grows; a block that became another one (re-cut) or
        // shrank starts over.
        const grew = text.startsWith(source);
        source = text;
        if (!grew || !streaming)
            forgetPieces();
        live.text = source.slice(moved);
        if (streaming)
            move();
    }

    function forgetPieces() {
        pieces.clear();
        moved = 0;
        movedWidth = 0;
    }

    // One text again.
    function join() {
        if (moved === 0)
            return;
        forgetPieces();
        live.text = source;
    }

    // Moves every live line but the last into a new piece, if they are plain prose.
    function move() {
        if (width <= 0 || live.lineCount <= liveLines)
            return;
        const lineHeight = live.contentHeight / live.lineCount;
        // Markdown drops up to three leading spaces: the shown text starts after them.
        const lead = /^ {0,3}/.exec(source.slice(moved, moved + 3))[0].length;
        const cut = lead + live.positionAt(0, (live.lineCount - 0.5) * lineHeight);
        const piece = source.slice(moved, moved + cut);
        const rest = source.slice(moved + cut);
        if (cut <= lead || markup.test(piece) || blockStart.test(rest))
            return;
        movedWidth = Math.max(movedWidth, live.implicitWidth);
        pieces.append({"pieceText": piece});
        moved += cut;
        live.text = rest;
    }

    onBlockChanged: sync()
    onStreamingChanged: {
        if (!streaming)
            join();
    }
    onWidthChanged: join()
    Component.onCompleted: sync()

    // The message's bubble fits its text's natural width (up to a maximum).
    implicitWidth: Math.max(live.implicitWidth, movedWidth)
    implicitHeight: column.implicitHeight
    Accessible.role: Accessible.StaticText
    // The source, not a TextEdit's `text`: reading a Markdown TextEdit's text writes its document
    // back out.
    Accessible.name: source

    ListModel {
        id: pieces
    }
    Column {
        id: column

        width: root.width

        Repeater {
            // A list model: a new piece adds one item instead of re-creating every piece.
            model: pieces

            TextEdit {
                required property string pieceText

                text: pieceText
                width: root.width
                font: root.textFont
                textFormat: TextEdit.MarkdownText
                wrapMode: Text.Wrap
                readOnly: true
                selectByMouse: true
                color: palette.windowText
                Accessible.ignored: true
            }
        }
        TextEdit {
            id: live

            objectName: "liveText"
            width: root.width
            font: root.textFont
            textFormat: TextEdit.MarkdownText
            wrapMode: Text.Wrap
            readOnly: true
            selectByMouse: true
            color: palette.windowText
            onLinkActivated: link => Qt.openUrlExternally(link)
            Accessible.ignored: true
        }
    }
}

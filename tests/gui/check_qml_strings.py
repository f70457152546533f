#!/usr/bin/env python3
"""Every text the QML shows or speaks goes through qsTr (issue #6, "all strings through qsTr").

Looks at the properties that put words on screen or to a screen reader (text, title,
placeholderText, ToolTip.text, Accessible.name/description, ...) and fails on a quoted literal
with letters in them outside a qsTr()/qsTranslate() call. Literals compared against (=== "ready")
are data, not text, and pass; so do glyphs and punctuation ("◀", "…").

Usage: check_qml_strings.py QML_DIR
"""
import pathlib
import re
import sys

PROPS = r'(?:text|title|placeholderText|ToolTip\.text|Accessible\.name|Accessible\.description|label|displayText)'
PROPERTY_LINE = re.compile(r'^\s*' + PROPS + r'\s*:\s*(.+)$')
STRING = r'(?:"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\')'
TRANSLATED = re.compile(r'qsTr(?:anslate|Id)?\s*\((?:[^()"\']|' + STRING + r')*\)')
COMPARED = re.compile(r'(?:===|!==|==|!=)\s*' + STRING)
LITERAL = re.compile(STRING)
LETTER = re.compile(r'[^\W\d_]')


def untranslated(qml_dir):
    for path in sorted(pathlib.Path(qml_dir).rglob('*.qml')):
        for number, line in enumerate(path.read_text(encoding='utf-8').splitlines(), 1):
            match = PROPERTY_LINE.match(line)
            if not match:
                continue
            expression = COMPARED.sub('', TRANSLATED.sub('', match.group(1)))
            if any(LETTER.search(literal.group(0)[1:-1]) for literal in LITERAL.finditer(expression)):
                yield f'{path}:{number}: {line.strip()}'


def main():
    found = list(untranslated(sys.argv[1]))
    for line in found:
        print(line)
    if found:
        print(f'{len(found)} shown text(s) not wrapped in qsTr()', file=sys.stderr)
        return 1
    print(f'every shown text in {sys.argv[1]} goes through qsTr()')
    return 0


if __name__ == '__main__':
    sys.exit(main())

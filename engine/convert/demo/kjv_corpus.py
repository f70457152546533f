#!/usr/bin/python3
"""Splits the King James Bible (Debian package bible-kjv-text, read with bible-kjv's
`bible -f`) into train.txt and valid.txt, one verse per line, references removed.

Every 20th chapter goes to validation: held-out text from every part of the book,
not one book the model never saw the style of.

    kjv_corpus.py OUT_DIR < kjv.txt
"""

import os
import re
import sys

VERSE = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    train, valid = [], []
    chapter, n_chapter = None, -1
    for line in sys.stdin:
        m = VERSE.match(line.rstrip("\n"))
        if not m:
            continue
        if (m.group(1), m.group(2)) != chapter:
            chapter, n_chapter = (m.group(1), m.group(2)), n_chapter + 1
        (valid if n_chapter % 20 == 19 else train).append(m.group(4).strip())
    if n_chapter + 1 != 1189:
        sys.exit("kjv_corpus.py: expected 1189 chapters on stdin, got %d" % (n_chapter + 1))
    for name, verses in (("train.txt", train), ("valid.txt", valid)):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as fp:
            fp.write("\n".join(verses) + "\n")
    print("kjv_corpus.py: %d train verses, %d validation verses" % (len(train), len(valid)))


if __name__ == "__main__":
    main()

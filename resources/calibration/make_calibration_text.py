#!/usr/bin/python3
"""Writes the calibration text Ember ships (calibration.txt) from the King James Bible in Debian's
bible-kjv-text package, public domain: every 29th chapter, from every part of the book, one
paragraph per chapter with the verse references removed. The app measures a dense model's
activation sparsity on it when the user has not given a text of their own.

    bible -f Gen1:1-Rev22:21 | make_calibration_text.py > calibration.txt
"""

import re
import sys

VERSE = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")
EVERY = 29


def main():
    chapters, chapter = [], None
    for line in sys.stdin:
        m = VERSE.match(line.rstrip("\n"))
        if not m:
            continue
        if (m.group(1), m.group(2)) != chapter:
            chapter = (m.group(1), m.group(2))
            chapters.append([])
        chapters[-1].append(m.group(4).strip())
    if len(chapters) != 1189:
        sys.exit("make_calibration_text.py: expected 1189 chapters on stdin, got %d" % len(chapters))
    sys.stdout.write("\n\n".join(" ".join(c) for c in chapters[EVERY // 2::EVERY]) + "\n")


if __name__ == "__main__":
    main()

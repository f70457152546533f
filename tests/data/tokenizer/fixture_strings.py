"""The test strings (strings.jsonl) and the expected-ids file format shared by the fixture scripts.

Expected files hold one line per string: the string as a JSON literal, a tab, the ids separated by
spaces (nothing after the tab for an empty result). Invisible characters (marks, separators other
than the ASCII space, controls) are written as \\uXXXX so that the files read unambiguously.
"""
import json
import os
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))


def quote(s):
    out = []
    for ch in json.dumps(s, ensure_ascii=False)[1:-1]:
        cat = unicodedata.category(ch)
        if ch != " " and (cat[0] in "MZ" or cat == "Cc"):
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def load_strings():
    with open(os.path.join(HERE, "strings.jsonl"), encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def save_strings(strings):
    with open(os.path.join(HERE, "strings.jsonl"), "w", encoding="utf-8") as f:
        f.write("".join(quote(s) + "\n" for s in strings))


def write_expected(path, rows):
    """rows: [(string, [ids])]"""
    with open(path, "w", encoding="utf-8") as f:
        for s, ids in rows:
            f.write("%s\t%s\n" % (quote(s), " ".join(str(i) for i in ids)))

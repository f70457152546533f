#!/usr/bin/env python3
"""Writes bpe-500.gguf and bpe-500.expected.tsv: a small GPT-2-style byte-level BPE vocabulary and
the ids GPT-2's encoding algorithm gives for strings.jsonl. Run once; both outputs are committed.

No GPT-2 vocabulary is available offline, so this trains 500 merges on licence texts that Debian
ships (/usr/share/common-licenses) plus a short multilingual sample, so that some merges join the
bytes of multi-byte characters.

The encoder here is written from GPT-2's published algorithm and is independent of the C++ one:
pre-tokenization runs GPT-2's pattern through Python's `re` engine, with \\p{L} and \\p{N} spelled
out as character classes from `unicodedata` (the `regex` module is not installed), and \\s as the
Unicode White_Space property.

    /usr/bin/python3 tests/data/tokenizer/make_bpe_vocab.py
"""
import collections
import os
import re
import unicodedata

import gguf_min
from fixture_strings import HERE, load_strings, write_expected

N_MERGES = 500
CORPUS = ["CC0-1.0", "GPL-3", "Apache-2.0"]
MULTILINGUAL = ("café déjà vu, naïve résumé. Grüße aus Köln! 日本語の日本。こんにちは、世界。"
                "Привет, мир. Ελληνικά. Çà et là: señor, año, über. 😀 🎉 ½ ٣٤٥ ")
SPECIAL = [("<|endoftext|>", 3), ("<|im_end|>", 3), ("[PAD0]", 4)]  # (piece, token_type)

WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
               "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def category_class(major):
    """A regex character-class body for all code points whose general category starts with `major`."""
    parts, start = [], None
    for cp in range(0x110001):
        inside = cp < 0x110000 and unicodedata.category(chr(cp))[0] == major
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            parts.append("\\U%08x-\\U%08x" % (start, cp - 1))
            start = None
    return "".join(parts)


def gpt2_pattern():
    letters, numbers = category_class("L"), category_class("N")
    space = "".join("\\U%08x" % ord(c) for c in WHITE_SPACE)
    return re.compile(
        "'s|'t|'re|'ve|'m|'ll|'d"
        "| ?[%s]+| ?[%s]+| ?[^%s%s%s]+"
        "|[%s]+(?![^%s])|[%s]+" % (letters, numbers, space, letters, numbers, space, space, space))


def bytes_to_unicode():
    """GPT-2's byte alphabet: printable Latin-1 bytes stand for themselves, the rest take U+0100.."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + list(range(0xAE, 0xFF + 1))
    table, extra = {}, 0
    for b in range(256):
        if b in keep:
            table[b] = chr(b)
        else:
            table[b] = chr(0x100 + extra)
            extra += 1
    return table


def merge_word(word, pair):
    out, i = [], 0
    while i < len(word):
        if i + 1 < len(word) and word[i] == pair[0] and word[i + 1] == pair[1]:
            out.append(word[i] + word[i + 1])
            i += 2
        else:
            out.append(word[i])
            i += 1
    return tuple(out)


def train(words):
    """words: Counter of tuples of alphabet characters. Most frequent pair first, ties by text."""
    merges = []
    words = dict(words)
    for _ in range(N_MERGES):
        pairs = collections.Counter()
        for word, n in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        words = {merge_word(w, best): n for w, n in words.items()}
    return merges


def bpe(token, ranks):
    """GPT-2's bpe(): merge every occurrence of the lowest-ranked pair, repeat."""
    word = tuple(token)
    while len(word) > 1:
        pairs = set(zip(word, word[1:]))
        best = min(pairs, key=lambda p: ranks.get(p, float("inf")))
        if best not in ranks:
            break
        word = merge_word(word, best)
    return word


def main():
    pattern = gpt2_pattern()
    byte_map = bytes_to_unicode()

    def chunks(text):
        for piece in pattern.findall(text):
            yield "".join(byte_map[b] for b in piece.encode("utf-8"))

    corpus = ""
    for name in CORPUS:
        with open(os.path.join("/usr/share/common-licenses", name), encoding="utf-8") as f:
            corpus += f.read()
    corpus += MULTILINGUAL * 20
    merges = train(collections.Counter(chunks(corpus)))

    tokens = [byte_map[b] for b in range(256)]
    for left, right in merges:
        tokens.append(left + right)
    assert len(set(tokens)) == len(tokens)
    types = [1] * len(tokens)
    for piece, ttype in SPECIAL:
        tokens.append(piece)
        types.append(ttype)
    eos = tokens.index("<|endoftext|>")

    gguf_min.write_metadata(os.path.join(HERE, "bpe-500.gguf"), [
        ("general.architecture", gguf_min.STRING, "falcon"),
        ("general.name", gguf_min.STRING, "byte-level BPE test vocab"),
        ("tokenizer.ggml.model", gguf_min.STRING, "gpt2"),
        ("tokenizer.ggml.tokens", gguf_min.ARRAY, (gguf_min.STRING, tokens)),
        ("tokenizer.ggml.token_type", gguf_min.ARRAY, (gguf_min.I32, types)),
        ("tokenizer.ggml.merges", gguf_min.ARRAY, (gguf_min.STRING, ["%s %s" % m for m in merges])),
        ("tokenizer.ggml.bos_token_id", gguf_min.U32, eos),
        ("tokenizer.ggml.eos_token_id", gguf_min.U32, eos),
    ])

    ids = {t: i for i, t in enumerate(tokens)}
    ranks = {m: r for r, m in enumerate(merges)}
    rows = []
    for s in load_strings():
        rows.append((s, [ids[t] for chunk in chunks(s) for t in bpe(chunk, ranks)]))
    write_expected(os.path.join(HERE, "bpe-500.expected.tsv"), rows)
    multibyte = sum(1 for l, r in merges if any(ord(c) >= 0x80 for c in l + r))
    print("wrote bpe-500.gguf (%d tokens, %d merges, %d touching non-ASCII bytes) and bpe-500.expected.tsv"
          % (len(tokens), len(merges), multibyte))


if __name__ == "__main__":
    main()

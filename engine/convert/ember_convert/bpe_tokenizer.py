"""Encodes text with a GPT-2 byte-level BPE tokenizer.json (Falcon), for profiling and
predictor training only: the corpus just has to become plausible ids, so Python's
Unicode classes stand in for the \\p{L}/\\p{N} of GPT-2's pre-tokenizer regex.
"""

import json
import re

from .errors import ConvertError

_PRETOKENIZE = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")


def _byte_to_unicode():
    """GPT-2's reversible map of the 256 byte values onto printable characters."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    chars, n = {}, 0
    for b in range(256):
        if b in keep:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + n)
            n += 1
    return chars


class BpeTokenizer:
    def __init__(self, path, bos_id):
        try:
            with open(path, encoding="utf-8") as fp:
                model = json.load(fp)["model"]
            self.vocab = model["vocab"]
            merges = [m.split(" ") if isinstance(m, str) else m for m in model["merges"]]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ConvertError("%s: not a Hugging Face BPE tokenizer.json: %s" % (path, e)) from e
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.bytes = _byte_to_unicode()
        self.bos = bos_id

    def bos_id(self):
        return self.bos

    def _word(self, word):
        parts = list(word)
        while len(parts) > 1:
            pairs = [(self.ranks.get((a, b), 1 << 30), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
            rank, i = min(pairs)
            if rank == 1 << 30:
                break
            parts[i:i + 2] = [parts[i] + parts[i + 1]]
        return [self.vocab[p] for p in parts if p in self.vocab]

    def encode(self, docs):
        out = []
        for text in docs:
            ids = []
            for piece in _PRETOKENIZE.findall(text):
                ids += self._word("".join(self.bytes[b] for b in piece.encode("utf-8")))
            out.append(ids)
        return out

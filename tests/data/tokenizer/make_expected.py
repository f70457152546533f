#!/usr/bin/env python3
"""Writes spm-4096.expected.tsv: the ids Debian's python3-sentencepiece gives for strings.jsonl
with tiny-relu-llama's tokenizer.model (no BOS). Run once; the output is committed.

    /usr/bin/python3 tests/data/tokenizer/make_expected.py [MODEL_DIR]
"""
import os
import sys

import sentencepiece

from fixture_strings import HERE, load_strings, write_expected


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "..", "..", "..", "..", "shared", "models", "tiny-relu-llama")
    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(model_dir, "hf", "tokenizer.model"))
    assert sp.encode("In the beginning") == [907, 261, 2020]
    rows = [(s, sp.encode(s)) for s in load_strings()]
    out = os.path.join(HERE, "spm-4096.expected.tsv")
    write_expected(out, rows)
    print("wrote", out, "with sentencepiece", sentencepiece.__version__)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes spm-4096.gguf: the tokenizer metadata of tiny-relu-llama in a vocab-only GGUF.

The keys and their types are copied from the converted model (llama.cpp's converter wrote them);
tokenizer.ggml.unknown_token_id, which that file lacks, is added from tokenizer.model. Every piece,
score and type is checked against the `sentencepiece` library's view of tokenizer.model.

    /usr/bin/python3 tests/data/tokenizer/make_spm_fixture.py [MODEL_DIR]

MODEL_DIR defaults to shared/models/tiny-relu-llama beside the repository.
"""
import os
import sys

import sentencepiece

import gguf_min
from fixture_strings import HERE

KEYS = [
    "tokenizer.ggml.model",
    "tokenizer.ggml.tokens",
    "tokenizer.ggml.scores",
    "tokenizer.ggml.token_type",
    "tokenizer.ggml.bos_token_id",
    "tokenizer.ggml.eos_token_id",
]

# sentencepiece's ModelProto piece types, which equal GGUF's token_type values. The Python binding
# has no query for USER_DEFINED (4); this model has none, so such a piece would show up as a mismatch.
SP_TYPE = {"unknown": 2, "control": 3, "unused": 5, "byte": 6}


def sp_type(sp, i):
    for name, value in SP_TYPE.items():
        if getattr(sp, "is_" + name)(i):
            return value
    return 1


def main():
    model_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        HERE, "..", "..", "..", "..", "shared", "models", "tiny-relu-llama")
    meta = {k: (t, v) for k, t, v in gguf_min.read_metadata(os.path.join(model_dir, "model.dense.gguf"))}
    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(model_dir, "hf", "tokenizer.model"))

    tokens = meta["tokenizer.ggml.tokens"][1][1]
    scores = meta["tokenizer.ggml.scores"][1][1]
    types = meta["tokenizer.ggml.token_type"][1][1]
    assert len(tokens) == len(scores) == len(types) == sp.vocab_size()
    for i in range(sp.vocab_size()):
        assert tokens[i] == sp.id_to_piece(i), i
        assert scores[i] == sp.get_score(i), i
        assert types[i] == sp_type(sp, i), i
    assert meta["tokenizer.ggml.bos_token_id"][1] == sp.bos_id()
    assert meta["tokenizer.ggml.eos_token_id"][1] == sp.eos_id()

    kvs = [("general.architecture", gguf_min.STRING, "llama"),
           ("general.name", gguf_min.STRING, "tiny-relu-llama vocab")]
    kvs += [(k,) + meta[k] for k in KEYS]
    kvs.append(("tokenizer.ggml.unknown_token_id", gguf_min.U32, sp.unk_id()))
    out = os.path.join(HERE, "spm-4096.gguf")
    gguf_min.write_metadata(out, kvs)
    print("wrote", out)


if __name__ == "__main__":
    main()

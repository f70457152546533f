"""Tokenizer metadata (docs/FORMATS.md §2.2): SentencePiece tokenizer.model for llama and
bamboo, GPT-2 byte-level BPE tokenizer.json for Falcon.
"""

import json
import os

from .errors import ConvertError
from .gguf_writer import T_ARRAY, T_FLOAT32, T_INT32, T_STRING, T_UINT32

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6

# config.json field -> GGUF key, in the order llama.cpp's converters write them
# (the misspelled "seperator" is the key readers look for).
_SPECIAL_IDS = [("bos", "bos_token_id"), ("eos", "eos_token_id"), ("unk", "unknown_token_id"),
                ("sep", "seperator_token_id"), ("pad", "padding_token_id")]


def _spm_tokens(path):
    import sentencepiece as spm
    try:
        sp = spm.SentencePieceProcessor(model_file=path)
    except (OSError, RuntimeError) as e:
        raise ConvertError("%s: not a SentencePiece model: %s" % (path, e)) from e
    tokens, scores, types = [], [], []
    for i in range(sp.vocab_size()):
        tokens.append(sp.id_to_piece(i))
        scores.append(sp.get_score(i))
        types.append(UNKNOWN if sp.is_unknown(i) else CONTROL if sp.is_control(i)
                     else UNUSED if sp.is_unused(i) else BYTE if sp.is_byte(i) else NORMAL)
    added = os.path.join(os.path.dirname(path), "added_tokens.json")
    if os.path.isfile(added):
        with open(added, encoding="utf-8") as fp:
            extra = json.load(fp)
        for text, tid in sorted(extra.items(), key=lambda kv: kv[1]):
            if tid != len(tokens):
                raise ConvertError("%s: added token %r has id %d, expected %d" % (added, text, tid, len(tokens)))
            tokens.append(text)
            scores.append(-1000.0)
            types.append(USER_DEFINED)
    return tokens, scores, types


def _bpe_tokens(path, n_vocab):
    try:
        with open(path, encoding="utf-8") as fp:
            tj = json.load(fp)
        model = tj["model"]
        vocab, merges = model["vocab"], model["merges"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConvertError("%s: not a Hugging Face BPE tokenizer.json: %s" % (path, e)) from e
    if model.get("type") != "BPE":
        raise ConvertError("%s: model.type %r is not BPE" % (path, model.get("type")))
    by_id = {tid: (tok, NORMAL) for tok, tid in vocab.items()}
    for t in tj.get("added_tokens", []):
        by_id[t["id"]] = (t["content"], CONTROL if t.get("special") else USER_DEFINED)
    tokens, types = [], []
    for i in range(n_vocab):
        tok, typ = by_id.get(i, ("[PAD%d]" % i, USER_DEFINED))
        tokens.append(tok)
        types.append(typ)
    merges = [m if isinstance(m, str) else " ".join(m) for m in merges]
    return tokens, types, merges


def _special_ids(hf_dir, n_tokens):
    with open(os.path.join(hf_dir, "config.json"), encoding="utf-8") as fp:
        cfg = json.load(fp)
    out = []
    for field, key in _SPECIAL_IDS:
        v = cfg.get(field + "_token_id")
        if isinstance(v, int) and 0 <= v < n_tokens:
            out.append(("tokenizer.ggml." + key, v))
    return out


def add_tokenizer(w, hf_dir, c):
    """Adds the tokenizer.ggml.* keys for the model in hf_dir to writer w."""
    if c.arch == "falcon":
        path = os.path.join(hf_dir, "tokenizer.json")
        if not os.path.isfile(path):
            raise ConvertError("%s: missing tokenizer.json (Falcon's GPT-2 BPE tokenizer)" % path)
        tokens, types, merges = _bpe_tokens(path, c.n_vocab)
        w.add("tokenizer.ggml.model", T_STRING, "gpt2")
        w.add("tokenizer.ggml.tokens", T_ARRAY, tokens, T_STRING)
        w.add("tokenizer.ggml.token_type", T_ARRAY, types, T_INT32)
        w.add("tokenizer.ggml.merges", T_ARRAY, merges, T_STRING)
    else:
        path = os.path.join(hf_dir, "tokenizer.model")
        if not os.path.isfile(path):
            raise ConvertError("%s: missing tokenizer.model (SentencePiece)" % path)
        tokens, scores, types = _spm_tokens(path)
        if len(tokens) != c.n_vocab:
            raise ConvertError("%s: %d tokens, but config.json vocab_size is %d" % (path, len(tokens), c.n_vocab))
        w.add("tokenizer.ggml.model", T_STRING, "llama")
        w.add("tokenizer.ggml.tokens", T_ARRAY, tokens, T_STRING)
        w.add("tokenizer.ggml.scores", T_ARRAY, scores, T_FLOAT32)
        w.add("tokenizer.ggml.token_type", T_ARRAY, types, T_INT32)
    for key, v in _special_ids(hf_dir, len(tokens)):
        w.add(key, T_UINT32, v)

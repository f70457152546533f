"""Turns a plain-text corpus into token windows, the same way for every tool.

One document per non-empty line. Documents are tokenized without BOS and
concatenated (SentencePiece's dummy prefix keeps the word boundary between them);
each window starts at a document start and begins with BOS, as a prompt does at
inference time.
"""

import json
import os

import sentencepiece as spm
import torch

from .bpe_tokenizer import BpeTokenizer
from .errors import ConvertError


def load_tokenizer(hf_dir, c):
    """SentencePiece tokenizer.model (llama, bamboo) or BPE tokenizer.json (Falcon)."""
    if c.arch == "falcon":
        path = os.path.join(hf_dir, "tokenizer.json")
        if not os.path.isfile(path):
            raise ConvertError("%s: missing tokenizer.json (needed to read the corpus)" % path)
        with open(os.path.join(hf_dir, "config.json"), encoding="utf-8") as fp:
            bos = json.load(fp).get("bos_token_id", 11)
        return BpeTokenizer(path, bos)
    path = os.path.join(hf_dir, "tokenizer.model")
    if not os.path.isfile(path):
        raise ConvertError("%s: missing tokenizer.model (needed to read the corpus)" % path)
    return spm.SentencePieceProcessor(model_file=path)


def read_documents(path):
    try:
        with open(path, encoding="utf-8") as fp:
            docs = [line.strip() for line in fp]
    except (OSError, UnicodeDecodeError) as e:
        raise ConvertError("%s: cannot read corpus: %s" % (path, e)) from e
    docs = [d for d in docs if d]
    if not docs:
        raise ConvertError("%s: corpus is empty" % path)
    return docs


class TokenStream:
    """All documents' ids in one tensor plus the offset where each document starts."""

    def __init__(self, tokenizer, docs):
        pieces = tokenizer.encode(docs)
        self.starts = []
        ids, n = [], 0
        for p in pieces:
            self.starts.append(n)
            ids.extend(p)
            n += len(p)
        self.ids = torch.tensor(ids, dtype=torch.long)
        self.bos = tokenizer.bos_id()

    def __len__(self):
        return len(self.ids)

    def window(self, start, n_ctx):
        """BOS + the n_ctx-1 ids from `start` (shorter at the end of the stream)."""
        body = self.ids[start:start + n_ctx - 1]
        return torch.cat([torch.tensor([self.bos]), body])

    def sequential_windows(self, n_ctx, max_tokens):
        """Non-overlapping windows from the start, each beginning at a document start,
        covering at most max_tokens ids; all windows have full length (batchable)."""
        out, pos, total = [], 0, 0
        for s in self.starts:
            if s < pos:
                continue
            if s + n_ctx - 1 > len(self.ids) or total + n_ctx > max_tokens:
                break
            out.append(self.window(s, n_ctx))
            pos, total = s + n_ctx - 1, total + n_ctx
        if not out:
            raise ConvertError("corpus is shorter than one window of %d tokens" % n_ctx)
        return torch.stack(out)

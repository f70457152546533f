"""Loads a Hugging Face folder into a PyTorch model plus the token windows of a corpus."""

import torch

from .corpus import TokenStream, load_tokenizer, read_documents
from .hf_checkpoint import load_weights
from .hf_config import load_config
from .torch_model import load_model


def load_hf(hf_dir):
    c = load_config(hf_dir)
    return c, load_model(c, load_weights(hf_dir))


def corpus_windows(hf_dir, c, corpus, n_ctx, max_tokens):
    """(n_windows, n_ctx) ids, each window BOS + text from a document start."""
    stream = TokenStream(load_tokenizer(hf_dir, c), read_documents(corpus))
    return stream.sequential_windows(min(n_ctx, c.n_ctx), max_tokens)


def batches(windows, batch):
    with torch.no_grad():
        for i in range(0, len(windows), batch):
            yield windows[i:i + batch]

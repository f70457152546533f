"""ember-profile: counts how often each FFN neuron fires over a text corpus and writes
PowerInfer's activation/activation_N.pt files (docs/FORMATS.md §6).

A neuron fires for a token when its activation is non-zero: ReLU(gate)·up for llama,
ReLU(gate)·ReLU(up) for bamboo, ReLU(up) for Falcon.
"""

import argparse
import os

import torch

from .model_io import batches, corpus_windows, load_hf


def hot_share(counts, part=0.8):
    """Share of neurons that together carry `part` of all activations (the hottest first)."""
    total = float(counts.sum())
    if total == 0:
        return 0.0
    cum = torch.cumsum(torch.sort(counts.double(), descending=True).values, 0)
    return (int(torch.searchsorted(cum, part * total)) + 1) / len(counts)


def profile(hf_dir, corpus, out_dir, max_tokens=100000, n_ctx=256, batch=8):
    """Writes out_dir/activation_N.pt; returns (counts per layer, tokens seen)."""
    torch.set_num_threads(1)
    c, model = load_hf(hf_dir)
    windows = corpus_windows(hf_dir, c, corpus, n_ctx, max_tokens)
    counts = [torch.zeros(c.n_ff, dtype=torch.float64) for _ in range(c.n_layer)]

    def record(il, u, active):
        counts[il] += active.reshape(-1, c.n_ff).sum(0, dtype=torch.float64)

    for x in batches(windows, batch):
        model(x, recorder=record)
    os.makedirs(out_dir, exist_ok=True)
    for il, n in enumerate(counts):
        torch.save(n.float().clone(), os.path.join(out_dir, "activation_%d.pt" % il))
    return counts, windows.numel()


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="ember-profile",
        description="Run a Hugging Face ReLU model over a text corpus (one document per line) and write "
                    "per-neuron activation counts as activation_N.pt (float32 [n_ff], torch.save).")
    ap.add_argument("hf_dir")
    ap.add_argument("corpus")
    ap.add_argument("-o", "--outdir", required=True, help="activation folder to write")
    ap.add_argument("--max-tokens", type=int, default=100000, help="tokens to run (default 100000)")
    ap.add_argument("--ctx", type=int, default=256, help="window length (capped by the model's; default 256)")
    args = ap.parse_args(argv)
    counts, n_tokens = profile(args.hf_dir, args.corpus, args.outdir, args.max_tokens, args.ctx)
    print("ember-profile: %d tokens; per layer: sparsity (share of neurons at zero), "
          "share of neurons carrying 80%% of activations" % n_tokens)
    for il, n in enumerate(counts):
        print("  layer %2d  sparsity %.3f  hot80 %.3f" % (il, 1 - float(n.sum()) / (n_tokens * len(n)), hot_share(n)))

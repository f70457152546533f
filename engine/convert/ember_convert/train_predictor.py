"""ember-train-predictor: trains PowerInfer's per-layer activation predictors.

For every layer it records (predictor input u, active mask) pairs over a corpus
(docs/FORMATS.md §3.2, §4.3: u is the residual before ffn_norm for llama/bamboo and the
layer input for Falcon), then fits fc1 (n_embd -> r, no bias), ReLU, fc2 (r -> n_ff,
no bias) with binary cross-entropy on the mask.

PowerInfer has one threshold for all layers and no bias in fc2, so a layer's
recall cannot be tuned by moving its own threshold. Instead each layer's scores
are calibrated: the score t_l at which the layer reaches the recall target (on
calibration tokens) is found, and fc2 is divided by |t_l| so that the common
threshold -1 falls exactly there (t_l is kept at or below -0.5 so the scale stays
moderate). The rank r is the smallest candidate whose precision at that recall
reaches --precision, else the largest.
"""

import argparse
import json
import os
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from .errors import ConvertError
from .model_io import batches, corpus_windows, load_hf

THRESHOLD = -1.0  # powerinfer.sparse_threshold of every predictor folder written here
MAX_CALIBRATED = -0.5


class Predictor(nn.Module):
    """State dict keys fc1.weight [r, n_embd], fc2.weight [n_ff, r]: PowerInfer's layout."""

    def __init__(self, n_embd, rank, n_ff):
        super().__init__()
        self.fc1 = nn.Linear(n_embd, rank, bias=False)
        self.fc2 = nn.Linear(rank, n_ff, bias=False)

    def forward(self, u):
        return self.fc2(F.relu(self.fc1(u)))


@dataclass
class LayerResult:
    rank: int
    recall: float
    precision: float
    sparsity: float            # share of neurons that are zero (truth)
    predicted_sparsity: float  # share of neurons the predictor skips


def evaluate(pred, u, mask):
    with torch.no_grad():
        p = pred(u) >= THRESHOLD
    tp = float((p & mask).sum())
    return LayerResult(rank=pred.fc1.out_features, recall=tp / max(1.0, float(mask.sum())),
                       precision=tp / max(1.0, float(p.sum())), sparsity=1 - float(mask.float().mean()),
                       predicted_sparsity=1 - float(p.float().mean()))


def fit(u, mask, rank, epochs, seed):
    torch.manual_seed(seed)
    pred = Predictor(u.shape[1], rank, mask.shape[1])
    opt = torch.optim.Adam(pred.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
    gen = torch.Generator().manual_seed(seed)
    batch = max(32, min(512, len(u) // 32))  # small samples still get enough steps
    for _ in range(epochs):
        order = torch.randperm(len(u), generator=gen)
        for i in range(0, len(u), batch):
            idx = order[i:i + batch]
            loss = F.binary_cross_entropy_with_logits(pred(u[idx]), mask[idx].float())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        sched.step()
    return pred


def calibrate(pred, u, mask, recall):
    """Scales fc2 so that score >= THRESHOLD keeps `recall` of the active neurons of (u, mask)."""
    with torch.no_grad():
        pos = pred(u)[mask]
        if len(pos) == 0:
            return
        # a little above the target, so that the held-out recall lands on it rather than just under
        k = max(1, int(len(pos) * (1 - recall) * 0.9))
        t = min(float(torch.kthvalue(pos, k).values), MAX_CALIBRATED)
        pred.fc2.weight.mul_(-THRESHOLD / abs(t))


def train_layer(u, mask, recall=0.95, ranks=(32, 64, 128), precision=0.8, epochs=16, seed=0):
    """u (n, n_embd) float32, mask (n, n_ff) bool -> (Predictor, LayerResult on the last 10 % of rows).
    The 10 % before them calibrate the scores; the rest trains."""
    n10 = max(1, len(u) // 10)
    train, cal, test = slice(0, len(u) - 2 * n10), slice(len(u) - 2 * n10, len(u) - n10), slice(len(u) - n10, None)
    for rank in ranks:
        pred = fit(u[train], mask[train], rank, epochs, seed)
        calibrate(pred, u[cal], mask[cal], recall)
        res = evaluate(pred, u[test], mask[test])
        if res.precision >= precision:
            break
    return pred, res


def record(model, c, windows, batch=8):
    """Per layer: u (n_tokens, n_embd) and active mask (n_tokens, n_ff)."""
    us = [[] for _ in range(c.n_layer)]
    masks = [[] for _ in range(c.n_layer)]

    def rec(il, u, active):
        us[il].append(u.reshape(-1, c.n_embd).clone())
        masks[il].append(active.reshape(-1, c.n_ff).clone())

    for x in batches(windows, batch):
        model(x, recorder=rec)
    return [torch.cat(x) for x in us], [torch.cat(m) for m in masks]


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="ember-train-predictor",
        description="Train PowerInfer activation predictors (model_N.pt + config.json) for a Hugging Face "
                    "ReLU model on a text corpus (one document per line).")
    ap.add_argument("hf_dir")
    ap.add_argument("corpus")
    ap.add_argument("-o", "--outdir", required=True, help="predictor folder to write")
    ap.add_argument("--recall", type=float, default=0.95, help="per-layer recall target on held-out tokens")
    ap.add_argument("--precision", type=float, default=0.8,
                    help="take the smallest rank reaching this precision at the recall target (default 0.8)")
    ap.add_argument("--ranks", default="32,64,128", help="candidate ranks (default 32,64,128)")
    ap.add_argument("--epochs", type=int, default=16)
    ap.add_argument("--max-tokens", type=int, default=40000, help="tokens to record (default 40000)")
    ap.add_argument("--ctx", type=int, default=256, help="window length (capped by the model's; default 256)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if not 0 < args.recall < 1:
        raise ConvertError("--recall %g: must be between 0 and 1" % args.recall)
    try:
        ranks = sorted(int(r) for r in args.ranks.split(","))
    except ValueError:
        raise ConvertError("--ranks %r: expected comma-separated integers" % args.ranks) from None
    torch.set_num_threads(1)
    c, model = load_hf(args.hf_dir)
    us, masks = record(model, c, corpus_windows(args.hf_dir, c, args.corpus, args.ctx, args.max_tokens))
    os.makedirs(args.outdir, exist_ok=True)
    print("ember-train-predictor: %d tokens, the last %d held out; per layer on held-out tokens:"
          % (len(us[0]), max(1, len(us[0]) // 10)))
    for il in range(c.n_layer):
        pred, r = train_layer(us[il], masks[il], args.recall, ranks, args.precision, args.epochs, args.seed + il)
        torch.save(pred.state_dict(), os.path.join(args.outdir, "model_%d.pt" % il))
        print("  layer %2d  rank %4d  recall %.3f  precision %.3f  sparsity %.3f  predicted sparsity %.3f%s"
              % (il, r.rank, r.recall, r.precision, r.sparsity, r.predicted_sparsity,
                 "" if r.recall >= args.recall - 0.01 else "  (recall target missed)"), flush=True)
    with open(os.path.join(args.outdir, "config.json"), "w") as fp:
        json.dump({"sparse_threshold": THRESHOLD}, fp)

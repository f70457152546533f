#!/usr/bin/python3
"""The figures of the demo model's README, measured in PyTorch on the held-out text:
validation loss dense and with the predictors gating the FFN (as PowerInfer runs it),
per-layer FFN sparsity, predictor recall/precision, and the share of neurons that carry
80 % of the activations (from the profiler's activation files).

    evaluate_demo.py HF_DIR PREDICTOR_DIR ACTIVATION_DIR VALID.txt
"""

import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.dont_write_bytecode = True
from ember_convert.model_io import batches, corpus_windows, load_hf  # noqa: E402
from ember_convert.predictors import load_predictors  # noqa: E402
from ember_convert.profile import hot_share  # noqa: E402


def main():
    hf_dir, pred_dir, act_dir, valid = sys.argv[1:5]
    torch.set_num_threads(1)
    c, model = load_hf(hf_dir)
    preds, threshold = load_predictors(pred_dir, c)
    windows = corpus_windows(hf_dir, c, valid, c.n_ctx, 1 << 30)
    n = len(preds)
    active, predicted, hit = [0] * n, [0] * n, [0] * n

    def predict(il, u):
        fc1, fc2 = preds[il]
        return torch.relu(u @ fc1.T) @ fc2.T >= threshold

    def record(il, u, mask):
        p = predict(il, u)
        active[il] += int(mask.sum())
        predicted[il] += int(p.sum())
        hit[il] += int((p & mask).sum())

    loss = {"dense": 0.0, "sparse": 0.0}
    for x in batches(windows, 8):
        dense = model(x[:, :-1], recorder=record)
        sparse = model(x[:, :-1], predict=predict)
        for k, logits in (("dense", dense), ("sparse", sparse)):
            loss[k] += F.cross_entropy(logits.reshape(-1, c.n_vocab), x[:, 1:].reshape(-1), reduction="sum").item()
    n_tok = windows[:, 1:].numel()
    cells = windows[:, :-1].numel() * c.n_ff
    report = {
        "validation_tokens": n_tok,
        "validation_loss": loss["dense"] / n_tok,
        "validation_loss_with_predictors": loss["sparse"] / n_tok,
        "sparsity": [1 - a / cells for a in active],
        "computed_with_predictors": [p / cells for p in predicted],
        "recall": [h / max(1, a) for h, a in zip(hit, active)],
        "precision": [h / max(1, p) for h, p in zip(hit, predicted)],
        "ranks": [fc1.shape[0] for fc1, _ in preds],
        "hot80": [hot_share(torch.load(os.path.join(act_dir, "activation_%d.pt" % il))) for il in range(n)],
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

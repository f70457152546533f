"""Reads a PowerInfer predictor folder: model_N.pt ({fc1.weight [r, n_embd], fc2.weight
[n_ff, r]}) per layer and an optional config.json with sparse_threshold (docs/FORMATS.md §3.2, §3.3).
"""

import json
import os
import re

import torch

from .errors import ConvertError


def load_predictors(pred_dir, c):
    """[(fc1, fc2)] per layer as float32 tensors, and the threshold (None if not given)."""
    if not os.path.isdir(pred_dir):
        raise ConvertError("%s: predictor folder not found" % pred_dir)
    found = sorted(int(m.group(1)) for m in (re.fullmatch(r"model_(\d+)\.pt", f) for f in os.listdir(pred_dir)) if m)
    if found != list(range(c.n_layer)):
        raise ConvertError("%s: need model_0.pt .. model_%d.pt for %d layers, found %d predictor files (%s)"
                           % (pred_dir, c.n_layer - 1, c.n_layer, len(found),
                              ", ".join("model_%d.pt" % i for i in found) or "none"))
    out = []
    for il in range(c.n_layer):
        path = os.path.join(pred_dir, "model_%d.pt" % il)
        try:
            sd = torch.load(path, map_location="cpu")
        except Exception as e:  # torch raises many types for a damaged file
            raise ConvertError("%s: cannot load with torch.load: %s" % (path, e)) from e
        if not isinstance(sd, dict) or "fc1.weight" not in sd or "fc2.weight" not in sd:
            raise ConvertError("%s: expected a state dict with fc1.weight and fc2.weight" % path)
        fc1, fc2 = sd["fc1.weight"], sd["fc2.weight"]
        r = fc1.shape[0] if fc1.dim() == 2 else -1
        if fc1.dim() != 2 or fc1.shape[1] != c.n_embd:
            raise ConvertError("%s: fc1.weight has shape %s, expected [r, %d] (r, n_embd)"
                               % (path, list(fc1.shape), c.n_embd))
        if list(fc2.shape) != [c.n_ff, r]:
            raise ConvertError("%s: fc2.weight has shape %s, expected [%d, %d] (n_ff, r)"
                               % (path, list(fc2.shape), c.n_ff, r))
        out.append((fc1.float(), fc2.float()))
    threshold = None
    cfg_path = os.path.join(pred_dir, "config.json")
    if os.path.isfile(cfg_path):
        try:
            with open(cfg_path, encoding="utf-8") as fp:
                cfg = json.load(fp)
            if "sparse_threshold" in cfg:
                threshold = float(cfg["sparse_threshold"])
        except (OSError, ValueError, TypeError) as e:
            raise ConvertError("%s: bad sparse_threshold: %s" % (cfg_path, e)) from e
    return out, threshold

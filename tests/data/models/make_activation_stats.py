#!/usr/bin/python3
"""Write PowerInfer-style activation statistics for the Bamboo and Falcon PWRI fixtures.

    /usr/bin/python3 tests/data/models/make_activation_stats.py

For each `<name>.powerinfer.reference.json` it writes `<name>.activation/activation_N.pt`:
`torch.save` of one float32 tensor of n_ff per-neuron counts per layer, as PowerInfer's
profiler does (docs/FORMATS.md §6). The counts are how often each neuron was active on the
reference prompt, plus a seeded random spread, so the hot set is neither empty nor trivial.
Tests copy a folder next to the model as `activation/`.
"""

import json
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))

for name in ("tiny-bamboo-f16", "tiny-falcon-f16"):
    with open(os.path.join(HERE, name + ".powerinfer.reference.json")) as f:
        ref = json.load(f)
    out = os.path.join(HERE, name + ".activation")
    os.makedirs(out, exist_ok=True)
    gen = torch.Generator().manual_seed(5)
    for layer, masks in enumerate(ref["active_masks"]):
        counts = torch.zeros(ref["n_ff"], dtype=torch.float32)
        for mask in masks:
            counts += torch.tensor([float(c == "1") for c in mask])
        counts = counts * 100 + torch.randint(0, 50, (ref["n_ff"],), generator=gen).float()
        torch.save(counts, os.path.join(out, "activation_%d.pt" % layer))
    print(out)

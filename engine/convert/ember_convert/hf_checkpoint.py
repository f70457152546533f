"""Finds and loads the weights of a Hugging Face model folder.

Accepts model.safetensors, pytorch_model.bin, and their sharded forms listed in
*.index.json. Tensors keep the checkpoint's order, which is the order PowerInfer's
converter writes them in.
"""

import glob
import json
import os

import torch

from .errors import ConvertError
from .safetensors_reader import read_safetensors


def _shards(hf_dir):
    for index_name in ("model.safetensors.index.json", "pytorch_model.bin.index.json"):
        index = os.path.join(hf_dir, index_name)
        if os.path.isfile(index):
            try:
                with open(index, encoding="utf-8") as fp:
                    weight_map = json.load(fp)["weight_map"]
            except (OSError, ValueError, KeyError) as e:
                raise ConvertError("%s: cannot read weight_map: %s" % (index, e)) from e
            return [os.path.join(hf_dir, f) for f in sorted(set(weight_map.values()))]
    for pattern in ("model*.safetensors", "pytorch_model*.bin"):
        files = sorted(glob.glob(os.path.join(hf_dir, pattern)))
        if files:
            return files
    raise ConvertError("%s: no weights (model*.safetensors or pytorch_model*.bin)" % hf_dir)


def _load_file(path):
    if not os.path.isfile(path):
        raise ConvertError("%s: missing weight file named by the index" % path)
    if path.endswith(".safetensors"):
        return read_safetensors(path)
    try:
        return torch.load(path, map_location="cpu")
    except Exception as e:  # torch raises many types for a damaged file
        raise ConvertError("%s: cannot load with torch.load: %s" % (path, e)) from e


def load_weights(hf_dir):
    """HF tensor name -> torch tensor, in checkpoint order."""
    weights = {}
    for path in _shards(hf_dir):
        for name, t in _load_file(path).items():
            if name in weights:
                raise ConvertError("%s: tensor %s appears in two shards" % (path, name))
            weights[name] = t
    return weights

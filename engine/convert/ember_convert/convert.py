"""ember-convert: a Hugging Face ReLU checkpoint (+ predictors) -> PowerInfer PWRI or dense GGUF.

Output matches PowerInfer's convert.py (sparse) and convert-dense.py (dense) tensor for
tensor and key for key; see engine/convert/README.md for the differences that remain.
"""

import argparse
import os

import numpy as np

from . import tensor_map
from .errors import ConvertError
from .gguf_writer import T_FLOAT32, T_STRING, T_UINT32, GgufWriter
from .hf_checkpoint import load_weights
from .hf_config import load_config
from .predictors import load_predictors
from .vocab import add_tokenizer

FILE_TYPE = {"f32": 0, "f16": 1}  # general.file_type: all F32 / mostly F16


def _hparams(w, c, hf_dir, outtype):
    a = c.arch
    if a == "falcon":
        name = "Falcon"
    elif c.n_ctx == 4096:
        name = "LLaMA v2"
    else:
        name = os.path.basename(os.path.normpath(hf_dir))
    w.add("general.architecture", T_STRING, a)
    w.add("general.name", T_STRING, name)
    if a == "falcon":
        w.add("falcon.context_length", T_UINT32, c.n_ctx)
        w.add("falcon.tensor_data_layout", T_STRING, "jploski")
        w.add("falcon.embedding_length", T_UINT32, c.n_embd)
        w.add("falcon.feed_forward_length", T_UINT32, c.n_ff)
        w.add("falcon.block_count", T_UINT32, c.n_layer)
        w.add("falcon.attention.head_count", T_UINT32, c.n_head)
        w.add("falcon.attention.head_count_kv", T_UINT32, c.n_head_kv)
        w.add("falcon.attention.layer_norm_epsilon", T_FLOAT32, c.norm_eps)
    else:
        w.add(a + ".context_length", T_UINT32, c.n_ctx)
        w.add(a + ".embedding_length", T_UINT32, c.n_embd)
        w.add(a + ".block_count", T_UINT32, c.n_layer)
        w.add(a + ".feed_forward_length", T_UINT32, c.n_ff)
        w.add(a + ".rope.dimension_count", T_UINT32, c.head_dim)
        w.add(a + ".attention.head_count", T_UINT32, c.n_head)
        w.add(a + ".attention.head_count_kv", T_UINT32, c.n_head_kv)
        w.add(a + ".attention.layer_norm_rms_epsilon", T_FLOAT32, c.norm_eps)
        if c.rope_base_given:
            w.add(a + ".rope.freq_base", T_FLOAT32, c.rope_base)
    w.add("general.file_type", T_UINT32, FILE_TYPE[outtype])


def _file_dtype(array, outtype):
    return array.astype(np.float16 if outtype == "f16" and array.ndim == 2 else np.float32)


def _model_tensors(c, weights, sparse, outtype):
    """(gguf name, array) in checkpoint order, every expected tensor present with its shape."""
    out = []
    if c.arch == "falcon" and "lm_head.weight" not in weights:
        weights = dict(weights, **{"lm_head.weight": weights["transformer.word_embeddings.weight"]})
    for hf_name, t in weights.items():
        mapped = tensor_map.gguf_name(c, hf_name)
        if mapped is None:
            continue
        name, transform = mapped
        w = t.float().numpy()
        want = tensor_map.expected_shape(c, name)
        if w.shape != want:
            raise ConvertError("checkpoint tensor %s has shape %s, expected %s from config.json"
                               % (hf_name, list(w.shape), list(want)))
        if transform == "down" and sparse:
            name = name.replace("ffn_down.weight", "ffn_down_t.weight")
        out.append((name, _file_dtype(tensor_map.apply(c, w, transform, sparse), outtype)))
    names = {n for n, _ in out}
    for n in tensor_map.required_names(c, sparse):
        if n not in names:
            raise ConvertError("checkpoint has no tensor for %s" % n)
    return out


def convert(hf_dir, pred_dir, out_path, outtype="f16", dense=False):
    c = load_config(hf_dir)
    predictors, threshold = (None, None) if dense else load_predictors(pred_dir, c)
    w = GgufWriter()
    _hparams(w, c, hf_dir, outtype)
    if c.act != "relu" and not dense:
        raise ConvertError("%s: a %s model is not sparse: convert it with --dense" % (hf_dir, c.act))
    if dense:
        # Dense GGUF does not say which activation its FFN uses; Ember reads this key.
        w.add("ember.ffn_activation", T_STRING, c.act)
    elif threshold is not None:
        w.add("powerinfer.sparse_threshold", T_FLOAT32, threshold)
    add_tokenizer(w, hf_dir, c)
    tensors = _model_tensors(c, load_weights(hf_dir), not dense, outtype)
    if not dense:
        pred = []
        for il, (fc1, fc2) in enumerate(predictors):
            pred.append(("blk.%d.fc1.weight" % il, _file_dtype(fc1.numpy(), outtype)))
            pred.append(("blk.%d.fc2.weight" % il, _file_dtype(fc2.numpy(), outtype)))
        # PowerInfer's Falcon converter writes the predictors first, its LLaMA converter last.
        tensors = pred + tensors if c.arch == "falcon" else tensors + pred
    for name, array in tensors:
        w.add_tensor(name, array)
    w.write(out_path, magic=b"GGUF" if dense else b"PWRI")
    return c, len(tensors)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="ember-convert",
        description="Convert a Hugging Face ReLU LLaMA/Bamboo/Falcon checkpoint and its predictors into a "
                    "PowerInfer sparse GGUF (magic PWRI), or with --dense into a llama.cpp-layout GGUF.")
    ap.add_argument("hf_dir", help="Hugging Face model folder (config.json, weights, tokenizer)")
    ap.add_argument("pred_dir", nargs="?", help="predictor folder (model_N.pt, optional config.json)")
    ap.add_argument("-o", "--outfile", required=True, help="output GGUF file")
    ap.add_argument("--outtype", choices=sorted(FILE_TYPE), default="f16",
                    help="type of 2-D weights (1-D ones stay F32); default f16")
    ap.add_argument("--dense", action="store_true", help="write a dense GGUF (no predictors)")
    args = ap.parse_args(argv)
    if not args.dense and args.pred_dir is None:
        ap.error("a predictor folder is needed (or --dense)")
    if args.dense and args.pred_dir is not None:
        ap.error("--dense takes no predictor folder")
    c, n = convert(args.hf_dir, args.pred_dir, args.outfile, args.outtype, args.dense)
    print("ember-convert: wrote %s (%s, %s, %d layers, %d tensors)"
          % (args.outfile, "dense GGUF" if args.dense else "PowerInfer PWRI", c.arch, c.n_layer, n))

"""Reads a Hugging Face config.json into the hyper-parameters every tool shares."""

import json
import os
from dataclasses import dataclass

from .errors import ConvertError

# HF model_type -> the PowerInfer architecture string (docs/FORMATS.md §2.1).
ARCHITECTURES = {
    "llama": "llama",
    "bamboo": "bamboo",
    "falcon": "falcon",
    "RefinedWeb": "falcon",
    "RefinedWebModel": "falcon",
}


@dataclass
class HfConfig:
    arch: str            # llama, bamboo or falcon
    n_vocab: int
    n_embd: int
    n_ff: int
    n_layer: int
    n_head: int
    n_head_kv: int
    n_ctx: int
    norm_eps: float      # RMSNorm eps (llama, bamboo) or LayerNorm eps (falcon)
    rope_base: float
    # Falcon only: two LayerNorms per layer (ln_attn, ln_mlp) as Falcon-40B, else one
    # input_layernorm feeding both branches as Falcon-7B.
    falcon_two_norms: bool = False
    # PowerInfer's converter writes rope.freq_base only when config.json sets rope_theta.
    rope_base_given: bool = False
    # The FFN's activation: "relu" (sparse, PowerInfer's models) or "silu" (an ordinary SwiGLU
    # LLaMA, written only as a dense GGUF).
    act: str = "relu"

    @property
    def head_dim(self):
        return self.n_embd // self.n_head


def _field(cfg, path, *names, default=None):
    for n in names:
        if n in cfg and cfg[n] is not None:
            return cfg[n]
    if default is not None:
        return default
    raise ConvertError("%s: missing field %s" % (path, " / ".join(names)))


def load_config(hf_dir):
    path = os.path.join(hf_dir, "config.json")
    if not os.path.isfile(path):
        raise ConvertError("%s: missing config.json (not a Hugging Face model folder?)" % path)
    try:
        with open(path, encoding="utf-8") as fp:
            cfg = json.load(fp)
    except (OSError, ValueError) as e:
        raise ConvertError("%s: cannot parse: %s" % (path, e)) from e
    model_type = cfg.get("model_type")
    if model_type not in ARCHITECTURES:
        raise ConvertError("%s: model_type %r is not supported (supported: %s)"
                           % (path, model_type, ", ".join(sorted(ARCHITECTURES))))
    arch = ARCHITECTURES[model_type]
    # Falcon configs name the MLP's function "activation", and older ones not at all (their
    # remote code hard-codes it: GELU in the originals, ReLU in ReluFalcon); trust the user there.
    act_field = "activation" if arch == "falcon" else "hidden_act"
    act = cfg.get(act_field, "relu" if arch == "falcon" else None)
    if act != "relu" and not (arch == "llama" and act == "silu"):
        raise ConvertError("%s: %s %r: only ReLU models are sparse (PowerInfer needs \"relu\"; a llama may "
                           "be \"silu\" for a dense GGUF)" % (path, act_field, act))
    n_embd = int(_field(cfg, path, "hidden_size"))
    if arch == "falcon":
        n_head = int(_field(cfg, path, "num_attention_heads", "n_head"))
        two_norms = bool(cfg.get("new_decoder_architecture", False))
        if two_norms:
            n_head_kv = int(_field(cfg, path, "num_kv_heads", "n_head_kv"))
        else:
            n_head_kv = 1 if cfg.get("multi_query", True) else n_head
        c = HfConfig(arch=arch, n_vocab=int(_field(cfg, path, "vocab_size")), n_embd=n_embd,
                     n_ff=4 * n_embd,  # Falcon's MLP width is fixed; the converter writes it so
                     n_layer=int(_field(cfg, path, "num_hidden_layers", "n_layer")),
                     n_head=n_head, n_head_kv=n_head_kv,
                     n_ctx=2048,  # what PowerInfer's Falcon converter hard-codes
                     norm_eps=float(_field(cfg, path, "layer_norm_epsilon", default=1e-5)),
                     rope_base=float(cfg.get("rope_theta", 10000.0)), falcon_two_norms=two_norms)
        if cfg.get("alibi") or cfg.get("bias") or not cfg.get("parallel_attn", True):
            raise ConvertError("%s: Falcon variant (alibi/bias/sequential attention) is not supported" % path)
    else:
        n_head = int(_field(cfg, path, "num_attention_heads"))
        c = HfConfig(arch=arch, n_vocab=int(_field(cfg, path, "vocab_size")), n_embd=n_embd,
                     n_ff=int(_field(cfg, path, "intermediate_size")),
                     n_layer=int(_field(cfg, path, "num_hidden_layers")),
                     n_head=n_head, n_head_kv=int(cfg.get("num_key_value_heads") or n_head),
                     n_ctx=int(_field(cfg, path, "max_position_embeddings")),
                     norm_eps=float(_field(cfg, path, "rms_norm_eps")),
                     rope_base=float(cfg.get("rope_theta", 10000.0)),
                     rope_base_given=cfg.get("rope_theta") is not None, act=act)
        if cfg.get("rope_scaling"):
            raise ConvertError("%s: rope_scaling %r is not supported" % (path, cfg["rope_scaling"]))
    if c.n_embd % c.n_head or c.n_head % c.n_head_kv:
        raise ConvertError("%s: hidden_size %d / heads %d / kv heads %d do not divide"
                           % (path, c.n_embd, c.n_head, c.n_head_kv))
    return c

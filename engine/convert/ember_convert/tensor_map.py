"""Hugging Face tensor names -> GGUF names and the layout change each needs (docs/FORMATS.md §4.2, §4.5).

Transforms: "permute_q"/"permute_k" (rows re-ordered for GGML rope mode 0),
"transpose" (ffn_down_t in sparse files), "qkv" (Falcon's fused QKV de-interleaved).
"""

import re

import numpy as np

from .errors import ConvertError

_LLAMA_GLOBAL = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}
_LLAMA_LAYER = {
    "self_attn.q_proj.weight": ("attn_q.weight", "permute_q"),
    "self_attn.k_proj.weight": ("attn_k.weight", "permute_k"),
    "self_attn.v_proj.weight": ("attn_v.weight", None),
    "self_attn.o_proj.weight": ("attn_output.weight", None),
    "mlp.gate_proj.weight": ("ffn_gate.weight", None),
    "mlp.up_proj.weight": ("ffn_up.weight", None),
    "mlp.down_proj.weight": ("ffn_down.weight", "down"),
    "input_layernorm.weight": ("attn_norm.weight", None),
    "post_attention_layernorm.weight": ("ffn_norm.weight", None),
}
_FALCON_GLOBAL = {
    "transformer.word_embeddings.weight": "token_embd.weight",
    "transformer.ln_f.weight": "output_norm.weight",
    "transformer.ln_f.bias": "output_norm.bias",
    "lm_head.weight": "output.weight",
}
_FALCON_LAYER = {
    "self_attention.query_key_value.weight": ("attn_qkv.weight", "qkv"),
    "self_attention.dense.weight": ("attn_output.weight", None),
    "mlp.dense_h_to_4h.weight": ("ffn_up.weight", None),
    "mlp.dense_4h_to_h.weight": ("ffn_down.weight", "down"),
    "ln_attn.weight": ("attn_norm_2.weight", None),
    "ln_attn.bias": ("attn_norm_2.bias", None),
    "ln_mlp.weight": ("attn_norm.weight", None),
    "ln_mlp.bias": ("attn_norm.bias", None),
    "input_layernorm.weight": ("attn_norm.weight", None),
    "input_layernorm.bias": ("attn_norm.bias", None),
}
# Buffers some checkpoints carry that are recomputed, never stored in GGUF.
_SKIP = re.compile(r".*\.rotary_emb\.inv_freq$")


def gguf_name(c, hf_name):
    """(gguf name, transform) or None for a tensor to leave out; unknown names are errors."""
    if _SKIP.match(hf_name):
        return None
    glob, layer, prefix = ((_FALCON_GLOBAL, _FALCON_LAYER, "transformer.h.") if c.arch == "falcon"
                           else (_LLAMA_GLOBAL, _LLAMA_LAYER, "model.layers."))
    if hf_name in glob:
        return glob[hf_name], None
    m = re.match(re.escape(prefix) + r"(\d+)\.(.+)$", hf_name)
    if m and m.group(2) in layer and int(m.group(1)) < c.n_layer:
        name, transform = layer[m.group(2)]
        return "blk.%s.%s" % (m.group(1), name), transform
    raise ConvertError("checkpoint tensor %s is not part of a %s model" % (hf_name, c.arch))


def permute(w, n_head):
    """HF rotate-half row order -> interleaved pairs per head (GGML rope mode 0)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def deinterleave_qkv(w, c):
    """Per-KV-group [queries, key, value] rows -> [all Q][all K][all V] ("jploski" layout)."""
    qkv = w.reshape(c.n_head_kv, c.n_head // c.n_head_kv + 2, c.head_dim, w.shape[1])
    q = qkv[:, :-2].reshape(-1, w.shape[1])
    k = qkv[:, -2].reshape(-1, w.shape[1])
    v = qkv[:, -1].reshape(-1, w.shape[1])
    return np.concatenate([q, k, v])


def apply(c, w, transform, sparse):
    """w: numpy (out, in) -> the array in the file's layout."""
    if transform == "permute_q":
        return permute(w, c.n_head)
    if transform == "permute_k":
        return permute(w, c.n_head_kv)
    if transform == "qkv":
        return deinterleave_qkv(w, c)
    if transform == "down" and sparse:
        return np.ascontiguousarray(w.T)
    return w


def expected_shape(c, gguf):
    """HF (numpy) shape each GGUF tensor must have, so a wrong config fails before writing."""
    E, F, V, hd = c.n_embd, c.n_ff, c.n_vocab, c.head_dim
    base = gguf.split(".", 2)[-1] if gguf.startswith("blk.") else gguf
    shapes = {
        "token_embd.weight": (V, E), "output.weight": (V, E),
        "attn_q.weight": (c.n_head * hd, E), "attn_k.weight": (c.n_head_kv * hd, E),
        "attn_v.weight": (c.n_head_kv * hd, E), "attn_output.weight": (E, c.n_head * hd),
        "attn_qkv.weight": ((c.n_head + 2 * c.n_head_kv) * hd, E),
        "ffn_gate.weight": (F, E), "ffn_up.weight": (F, E), "ffn_down.weight": (E, F),
    }
    return shapes.get(base, (E,))


def required_names(c, sparse):
    down = "ffn_down_t.weight" if sparse else "ffn_down.weight"
    if c.arch == "falcon":
        names = ["token_embd.weight", "output_norm.weight", "output_norm.bias", "output.weight"]
        layer = ["attn_qkv.weight", "attn_output.weight", "ffn_up.weight", down, "attn_norm.weight", "attn_norm.bias"]
        if c.falcon_two_norms:
            layer += ["attn_norm_2.weight", "attn_norm_2.bias"]
    else:
        names = ["token_embd.weight", "output_norm.weight", "output.weight"]
        layer = ["attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight", "ffn_gate.weight",
                 "ffn_up.weight", down, "attn_norm.weight", "ffn_norm.weight"]
    return names + ["blk.%d.%s" % (il, n) for il in range(c.n_layer) for n in layer]

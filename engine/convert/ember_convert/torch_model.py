"""PyTorch forwards of the three ReLU architectures, with Hugging Face parameter names.

The module tree mirrors transformers' LlamaForCausalLM / FalconForCausalLM, so
`state_dict()` of a model trained here is a loadable HF checkpoint and an HF
checkpoint loads with `load_state_dict`. Profiling and predictor training need the
FFN internals a stock forward hides: pass `recorder(il, u, active)` to `forward`,
with u = the predictor input (docs/FORMATS.md §3.2) and active = the neurons whose
activation is non-zero (2.7), both (batch, seq, ...). `predict(il, u)` returning a
bool mask (batch, seq, n_ff) runs the FFN as PowerInfer does with predictors: only
predicted neurons contribute.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(n_pos, head_dim, base, dtype):
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    freqs = torch.outer(torch.arange(n_pos, dtype=torch.float64), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x, cos, sin):
    """HF rotate-half RoPE; x (batch, heads, seq, head_dim)."""
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def causal_attention(q, k, v):
    """q (B, H, T, hd), k/v (B, Hkv, T, hd) -> (B, T, H*hd); GQA by repeating KV heads."""
    B, H, T, hd = q.shape
    rep = H // k.shape[1]
    if rep > 1:
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
    mask = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    return (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, T, H * hd)


# --------------------------------------------------------------------------- llama, bamboo

class LlamaAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.q_proj = nn.Linear(c.n_embd, c.n_head * c.head_dim, bias=False)
        self.k_proj = nn.Linear(c.n_embd, c.n_head_kv * c.head_dim, bias=False)
        self.v_proj = nn.Linear(c.n_embd, c.n_head_kv * c.head_dim, bias=False)
        self.o_proj = nn.Linear(c.n_head * c.head_dim, c.n_embd, bias=False)

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        hd = self.c.head_dim
        q = self.q_proj(x).view(B, T, -1, hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, -1, hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, -1, hd).transpose(1, 2)
        return self.o_proj(causal_attention(apply_rope(q, cos, sin), apply_rope(k, cos, sin), v))


class LlamaMLP(nn.Module):
    """ReGLU ReLU(gate)·up (llama, as ReluLLaMA), ReLU(gate)·ReLU(up) (bamboo), or SwiGLU
    SiLU(gate)·up (an ordinary llama; "active" is then gate > 0, as for ReGLU)."""

    def __init__(self, c):
        super().__init__()
        self.relu_up = c.arch == "bamboo"
        self.silu = c.act == "silu"
        self.gate_proj = nn.Linear(c.n_embd, c.n_ff, bias=False)
        self.up_proj = nn.Linear(c.n_embd, c.n_ff, bias=False)
        self.down_proj = nn.Linear(c.n_ff, c.n_embd, bias=False)

    def forward(self, x, keep):
        g = self.gate_proj(x)
        gate = F.silu(g) if self.silu else F.relu(g)
        up = self.up_proj(x)
        if self.relu_up:
            up = F.relu(up)
        active = (gate > 0) & (up > 0) if self.relu_up else g > 0
        a = gate * up if keep is None else gate * up * keep
        return self.down_proj(a), active


class LlamaLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = LlamaAttention(c)
        self.mlp = LlamaMLP(c)
        self.input_layernorm = RMSNorm(c.n_embd, c.norm_eps)
        self.post_attention_layernorm = RMSNorm(c.n_embd, c.norm_eps)

    def forward(self, x, cos, sin, il, recorder, predict):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        out, active = self.mlp(self.post_attention_layernorm(x), None if predict is None else predict(il, x))
        if recorder is not None:
            recorder(il, x, active)
        return x + out


class LlamaBody(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.n_vocab, c.n_embd)
        self.layers = nn.ModuleList(LlamaLayer(c) for _ in range(c.n_layer))
        self.norm = RMSNorm(c.n_embd, c.norm_eps)


class LlamaForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.model = LlamaBody(c)
        self.lm_head = nn.Linear(c.n_embd, c.n_vocab, bias=False)

    def forward(self, ids, recorder=None, predict=None):
        x = self.model.embed_tokens(ids)
        cos, sin = rope_tables(ids.shape[1], self.c.head_dim, self.c.rope_base, x.dtype)
        for il, layer in enumerate(self.model.layers):
            x = layer(x, cos, sin, il, recorder, predict)
        return self.lm_head(self.model.norm(x))


# --------------------------------------------------------------------------- falcon

class FalconAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.query_key_value = nn.Linear(c.n_embd, (c.n_head + 2 * c.n_head_kv) * c.head_dim, bias=False)
        self.dense = nn.Linear(c.n_embd, c.n_embd, bias=False)

    def forward(self, x, cos, sin):
        """HF fused QKV: per KV group, its query heads, then one key and one value head."""
        c, (B, T, _) = self.c, x.shape
        per_group = c.n_head // c.n_head_kv
        qkv = self.query_key_value(x).view(B, T, c.n_head_kv, per_group + 2, c.head_dim)
        q = qkv[:, :, :, :-2].reshape(B, T, c.n_head, c.head_dim).transpose(1, 2)
        k = qkv[:, :, :, -2].transpose(1, 2)
        v = qkv[:, :, :, -1].transpose(1, 2)
        return self.dense(causal_attention(apply_rope(q, cos, sin), apply_rope(k, cos, sin), v))


class FalconMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(c.n_embd, c.n_ff, bias=False)
        self.dense_4h_to_h = nn.Linear(c.n_ff, c.n_embd, bias=False)

    def forward(self, x, keep):
        a = F.relu(self.dense_h_to_4h(x))
        active = a > 0
        return self.dense_4h_to_h(a if keep is None else a * keep), active


class FalconLayer(nn.Module):
    """Parallel residual: x + attention(norm_a(x)) + mlp(norm_m(x))."""

    def __init__(self, c):
        super().__init__()
        self.two_norms = c.falcon_two_norms
        self.self_attention = FalconAttention(c)
        self.mlp = FalconMLP(c)
        if self.two_norms:
            self.ln_attn = nn.LayerNorm(c.n_embd, eps=c.norm_eps)
            self.ln_mlp = nn.LayerNorm(c.n_embd, eps=c.norm_eps)
        else:
            self.input_layernorm = nn.LayerNorm(c.n_embd, eps=c.norm_eps)

    def forward(self, x, cos, sin, il, recorder, predict):
        if self.two_norms:
            xa, xm = self.ln_attn(x), self.ln_mlp(x)
        else:
            xa = xm = self.input_layernorm(x)
        out, active = self.mlp(xm, None if predict is None else predict(il, x))
        if recorder is not None:
            recorder(il, x, active)
        return x + self.self_attention(xa, cos, sin) + out


class FalconBody(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.n_vocab, c.n_embd)
        self.h = nn.ModuleList(FalconLayer(c) for _ in range(c.n_layer))
        self.ln_f = nn.LayerNorm(c.n_embd, eps=c.norm_eps)


class FalconForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.transformer = FalconBody(c)
        self.lm_head = nn.Linear(c.n_embd, c.n_vocab, bias=False)

    def forward(self, ids, recorder=None, predict=None):
        x = self.transformer.word_embeddings(ids)
        cos, sin = rope_tables(ids.shape[1], self.c.head_dim, self.c.rope_base, x.dtype)
        for il, layer in enumerate(self.transformer.h):
            x = layer(x, cos, sin, il, recorder, predict)
        return self.lm_head(self.transformer.ln_f(x))


def build_model(c):
    return FalconForCausalLM(c) if c.arch == "falcon" else LlamaForCausalLM(c)


def load_model(c, weights, dtype=torch.float32):
    """A model in eval mode holding `weights` (HF name -> tensor); Falcon-7B style
    checkpoints tie lm_head to the embedding and leave it out."""
    model = build_model(c)
    weights = dict(weights)
    if c.arch == "falcon" and "lm_head.weight" not in weights:
        weights["lm_head.weight"] = weights["transformer.word_embeddings.weight"]
    model.load_state_dict({k: v.to(dtype) for k, v in weights.items()})
    return model.to(dtype).eval()

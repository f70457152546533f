#!/usr/bin/python3
"""Trains the demo model from scratch: a small ReLU LLaMA (ReGLU FFN, as ReluLLaMA); with
--act silu the same LLaMA with an ordinary SwiGLU FFN (to measure activation sparsity where it is
meant to work).

Writes a Hugging Face folder (config.json, pytorch_model.bin, tokenizer.model,
tokenizer_config.json) that the toolchain converts like any other checkpoint.
Deterministic: fixed seeds, one thread.

    train_demo.py TRAIN.txt VALID.txt TOKENIZER.model OUT_HF_DIR [--steps N] [--act relu|silu]
"""

import argparse
import json
import math
import os
import shutil
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.dont_write_bytecode = True
from ember_convert.corpus import TokenStream, read_documents  # noqa: E402
from ember_convert.hf_config import load_config  # noqa: E402
from ember_convert.torch_model import build_model  # noqa: E402

import sentencepiece as spm  # noqa: E402

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "relu",
    "vocab_size": 4096, "hidden_size": 256, "intermediate_size": 1024, "num_hidden_layers": 6,
    "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 256,
    "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "rope_scaling": None, "initializer_range": 0.02,
    "tie_word_embeddings": False, "attention_bias": False, "bos_token_id": 1, "eos_token_id": 2,
    "pad_token_id": None, "torch_dtype": "float32",
}
TOKENIZER_CONFIG = {
    "tokenizer_class": "LlamaTokenizer", "model_max_length": 256, "add_bos_token": True,
    "add_eos_token": False, "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
    "legacy": True,
}
SEED = 20240601
# 800 steps x 4 x 256 tokens (0.8 M tokens) fit the budget of about 30 minutes on one shared core;
# at this scale more, smaller steps beat fewer large ones.
BATCH = 4
LR, LR_MIN, WARMUP = 2e-3, 1e-4, 40


def init_weights(model, n_layer):
    """GPT-2 style: N(0, 0.02), the projections that write into the residual stream
    scaled by 1/sqrt(2 n_layer) so the stream does not grow with depth."""
    for name, p in model.named_parameters():
        if p.dim() == 1:
            torch.nn.init.ones_(p)
        elif name.endswith(("o_proj.weight", "down_proj.weight")):
            torch.nn.init.normal_(p, std=0.02 / math.sqrt(2 * n_layer))
        else:
            torch.nn.init.normal_(p, std=0.02)


def lr_at(step, steps):
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    t = (step - WARMUP) / max(1, steps - WARMUP)
    return LR_MIN + 0.5 * (LR - LR_MIN) * (1 + math.cos(math.pi * t))


@torch.no_grad()
def evaluate(model, windows):
    model.eval()
    total, n = 0.0, 0
    for i in range(0, len(windows), BATCH):
        x = windows[i:i + BATCH]
        logits = model(x[:, :-1])
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1),
                                 reduction="sum").item()
        n += x[:, 1:].numel()
    model.train()
    return total / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("train")
    ap.add_argument("valid")
    ap.add_argument("tokenizer")
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=800)
    ap.add_argument("--act", choices=("relu", "silu"), default="relu",
                    help="the FFN's activation: relu (the demo, sparse) or silu (an ordinary SwiGLU llama)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "config.json"), "w") as fp:
        json.dump(dict(CONFIG, hidden_act=args.act), fp, indent=2)
    with open(os.path.join(args.out, "tokenizer_config.json"), "w") as fp:
        json.dump(TOKENIZER_CONFIG, fp, indent=2)
    shutil.copyfile(args.tokenizer, os.path.join(args.out, "tokenizer.model"))
    c = load_config(args.out)
    n_ctx = c.n_ctx

    sp = spm.SentencePieceProcessor(model_file=args.tokenizer)
    train = TokenStream(sp, read_documents(args.train))
    valid = TokenStream(sp, read_documents(args.valid)).sequential_windows(n_ctx + 1, 64 * (n_ctx + 1))
    print("train tokens %d, validation windows %d x %d" % (len(train), len(valid), n_ctx), flush=True)
    starts = torch.tensor([s for s in train.starts if s + n_ctx <= len(train)])

    model = build_model(c)
    init_weights(model, c.n_layer)
    print("parameters %d" % sum(p.numel() for p in model.parameters()), flush=True)
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() == 1]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}], lr=LR, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(SEED)
    t0 = time.time()
    for step in range(args.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args.steps)
        pick = starts[torch.randint(len(starts), (BATCH,), generator=gen)]
        x = torch.stack([train.window(int(s), n_ctx + 1) for s in pick])
        logits = model(x[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0 or step == args.steps - 1:
            print("step %5d  loss %.4f  lr %.2e  %.0f s" % (step, loss.item(), lr_at(step, args.steps),
                                                           time.time() - t0), flush=True)
        if (step + 1) % 300 == 0 or step == args.steps - 1:
            print("step %5d  validation loss %.4f" % (step, evaluate(model, valid)), flush=True)
    torch.save(model.state_dict(), os.path.join(args.out, "pytorch_model.bin"))


if __name__ == "__main__":
    main()

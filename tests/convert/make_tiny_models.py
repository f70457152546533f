#!/usr/bin/python3
"""Builds tiny random Hugging Face checkpoints for the toolchain tests, with PyTorch logits.

    make_tiny_models.py OUT_DIR

It also converts each checkpoint with ember-convert's code (in this process: every tool run
would start torch again) to OUT_DIR/<arch>.dense.f16.gguf and OUT_DIR/<arch>.pwri.f32.gguf.
corpus.txt beside this file (the tokenizer's training text and the tests' corpus) is Genesis 1-2
and Psalm 23 of the King James Bible from Debian's bible-kjv-text, public domain, one verse a line.

For each architecture it writes OUT_DIR/<arch>/ (HF folder), OUT_DIR/<arch>-predictor/
and OUT_DIR/<arch>.reference.json:
  * llama: GQA (4 heads, 2 KV heads), pytorch_model.bin in float32, SentencePiece
    tokenizer trained on corpus.txt;
  * bamboo: the same shapes, ReLU on gate and up, weights in two safetensors shards
    (one F16, one F32) listed by model.safetensors.index.json;
  * falcon: Falcon-40B style (ln_attn + ln_mlp, fused QKV, 4 heads / 2 KV heads),
    model.safetensors, a byte-level BPE tokenizer.json.
The predictors keep a fixed random subset of neurons whatever the input: fc2 rows are
+1 or -1, so score = ±sum(ReLU(fc1 u)) sits far from the threshold 0 and the gated
PyTorch reference is not sensitive to rounding.

reference.json: tokens (BOS + 15 ids), dense and sparse logits at every position
(float32 lists), computed by ember_convert.torch_model in float64; the dense greedy
continuation of the first 4 tokens with each step's top1-top2 margin; and how many
neurons each layer's predictor keeps.
"""

import json
import os
import struct
import sys

import sentencepiece as spm
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "engine", "convert"))
sys.dont_write_bytecode = True
from ember_convert.convert import convert  # noqa: E402
from ember_convert.hf_config import load_config  # noqa: E402
from ember_convert.torch_model import build_model  # noqa: E402

N_EMBD, N_FF, N_LAYER, N_HEAD, N_HEAD_KV = 64, 256, 2, 4, 2
RANKS = [16, 24]
ARCHS = ("llama", "bamboo", "falcon")
KEEP = 0.6  # share of neurons the predictors let through


def write_safetensors(path, tensors):
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        raw = t.contiguous().numpy().tobytes()
        header[name] = {"dtype": {torch.float32: "F32", torch.float16: "F16"}[t.dtype],
                        "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    head = json.dumps(header).encode()
    with open(path, "wb") as fp:
        fp.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))


def random_weights(model, seed):
    """Unit-scale activations throughout, so logits have std ~1 and clear top-1 margins."""
    gen = torch.Generator().manual_seed(seed)
    out = {}
    for name, p in model.state_dict().items():
        if p.dim() == 1:
            out[name] = (1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn(p.shape, generator=gen)
        elif "embed" in name or "word_embeddings" in name:
            out[name] = torch.randn(p.shape, generator=gen)
        else:
            out[name] = torch.randn(p.shape, generator=gen) / p.shape[1] ** 0.5
    return out


def predictors(c, seed):
    gen = torch.Generator().manual_seed(seed)
    out = []
    for r in RANKS[:c.n_layer]:
        fc1 = torch.randn(r, c.n_embd, generator=gen) / c.n_embd ** 0.5
        keep = torch.rand(c.n_ff, generator=gen) < KEEP
        fc2 = torch.where(keep, 1.0, -1.0)[:, None].expand(c.n_ff, r).contiguous()
        out.append((fc1, fc2))
    return out


def logits(c, weights, tokens, preds=None):
    model = build_model(c).double()
    model.load_state_dict({k: v.double() for k, v in weights.items()})
    predict = None
    if preds is not None:
        def predict(il, u):
            fc1, fc2 = preds[il]
            return torch.relu(u @ fc1.double().T) @ fc2.double().T >= 0.0
    with torch.no_grad():
        return model(torch.tensor([tokens]), predict=predict)[0].float()


def greedy(c, weights, prompt, n):
    seq, margins = list(prompt), []
    for _ in range(n):
        top2 = logits(c, weights, seq)[-1].topk(2)
        seq.append(int(top2.indices[0]))
        margins.append(float(top2.values[0] - top2.values[1]))
    return seq[len(prompt):], margins


def spm_tokenizer(out_dir):
    prefix = os.path.join(out_dir, "spm")
    spm.SentencePieceTrainer.train(
        input=os.path.join(HERE, "corpus.txt"), model_prefix=prefix, model_type="bpe", vocab_size=320,
        byte_fallback=True, character_coverage=1.0, unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
        num_threads=1, minloglevel=2)
    return prefix + ".model"


def bpe_tokenizer_json():
    """GPT-2 byte-level BPE: the 256 byte symbols, three merges, <|endoftext|> as id 259."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    chars, n = [], 0
    for b in range(256):
        chars.append(chr(b) if b in keep else chr(256 + n))
        n += b not in keep
    vocab = {ch: i for i, ch in enumerate(chars)}
    merges = ["h e", "Ġ t", "Ġt he"]
    for m in merges:
        vocab[m.replace(" ", "")] = len(vocab)
    return {"version": "1.0", "model": {"type": "BPE", "vocab": vocab, "merges": merges},
            "added_tokens": [{"id": len(vocab), "content": "<|endoftext|>", "special": True}]}


def config_for(arch, n_vocab):
    if arch == "falcon":
        return {"model_type": "falcon", "architectures": ["FalconForCausalLM"], "vocab_size": n_vocab,
                "hidden_size": N_EMBD, "num_hidden_layers": N_LAYER, "num_attention_heads": N_HEAD,
                "num_kv_heads": N_HEAD_KV, "new_decoder_architecture": True, "parallel_attn": True,
                "bias": False, "alibi": False, "layer_norm_epsilon": 1e-5, "bos_token_id": 259,
                "eos_token_id": 259}
    return {"model_type": arch, "hidden_act": "relu", "vocab_size": n_vocab, "hidden_size": N_EMBD,
            "intermediate_size": N_FF, "num_hidden_layers": N_LAYER, "num_attention_heads": N_HEAD,
            "num_key_value_heads": N_HEAD_KV, "max_position_embeddings": 128, "rms_norm_eps": 1e-5,
            "rope_theta": 10000.0, "bos_token_id": 1, "eos_token_id": 2}


def make(out_dir, arch, seed, spm_model):
    hf = os.path.join(out_dir, arch)
    os.makedirs(hf, exist_ok=True)
    if arch == "falcon":
        tok = bpe_tokenizer_json()
        n_vocab = len(tok["model"]["vocab"]) + 1
        with open(os.path.join(hf, "tokenizer.json"), "w") as fp:
            json.dump(tok, fp)
    else:
        n_vocab = 320
        with open(spm_model, "rb") as src, open(os.path.join(hf, "tokenizer.model"), "wb") as dst:
            dst.write(src.read())
    with open(os.path.join(hf, "config.json"), "w") as fp:
        json.dump(config_for(arch, n_vocab), fp, indent=1)
    c = load_config(hf)
    w = random_weights(build_model(c), seed)
    if arch == "llama":
        torch.save(w, os.path.join(hf, "pytorch_model.bin"))
    elif arch == "bamboo":
        names = list(w)
        half = len(names) // 2
        shards = {"model-00001-of-00002.safetensors": {n: w[n].half() for n in names[:half]},
                  "model-00002-of-00002.safetensors": {n: w[n] for n in names[half:]}}
        for fname, tensors in shards.items():
            write_safetensors(os.path.join(hf, fname), tensors)
        # the reference must see exactly what the checkpoint holds
        w = {n: w[n].half().float() if n in shards["model-00001-of-00002.safetensors"] else w[n] for n in names}
        with open(os.path.join(hf, "model.safetensors.index.json"), "w") as fp:
            json.dump({"weight_map": {n: f for f, ts in shards.items() for n in ts}}, fp)
    else:
        write_safetensors(os.path.join(hf, "model.safetensors"), w)

    pred_dir = os.path.join(out_dir, arch + "-predictor")
    os.makedirs(pred_dir, exist_ok=True)
    preds = predictors(c, seed + 1)
    for il, (fc1, fc2) in enumerate(preds):
        torch.save({"fc1.weight": fc1, "fc2.weight": fc2}, os.path.join(pred_dir, "model_%d.pt" % il))
    with open(os.path.join(pred_dir, "config.json"), "w") as fp:
        json.dump({"sparse_threshold": 0.0}, fp)

    gen = torch.Generator().manual_seed(seed + 2)
    bos = json.load(open(os.path.join(hf, "config.json")))["bos_token_id"]
    tokens = [bos] + torch.randint(3, n_vocab - 1, (15,), generator=gen).tolist()
    ref = {"n_vocab": n_vocab, "n_layer": c.n_layer, "n_ff": c.n_ff, "tokens": tokens,
           "dense": logits(c, w, tokens).reshape(-1).tolist(),
           "sparse": logits(c, w, tokens, preds).reshape(-1).tolist(),
           "kept": [int((fc2[:, 0] > 0).sum()) for _, fc2 in preds]}
    ref["greedy"], ref["greedy_margins"] = greedy(c, w, tokens[:4], 8)
    with open(os.path.join(out_dir, arch + ".reference.json"), "w") as fp:
        json.dump(ref, fp)


def make_all(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.set_num_threads(1)
    spm_model = spm_tokenizer(out_dir)
    for seed, arch in enumerate(ARCHS):
        make(out_dir, arch, 100 + 10 * seed, spm_model)
        hf = os.path.join(out_dir, arch)
        convert(hf, None, os.path.join(out_dir, arch + ".dense.f16.gguf"), "f16", dense=True)
        convert(hf, hf + "-predictor", os.path.join(out_dir, arch + ".pwri.f32.gguf"), "f32")


def main():
    make_all(sys.argv[1])


if __name__ == "__main__":
    main()

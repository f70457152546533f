#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into tests/fuzz/corpus/<target>/ from the project's own
fixtures and writers. The output is committed; rerun after changing a format.

    tests/fuzz/make_corpus.py [BUILD_DIR]

The calibration and routing-profile seeds come from the built ember-synth-model and ember-calibrate
(BUILD_DIR, default build); without them those seeds are left as they are.
"""

import json
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "data" / "models"))
import gguf_io  # noqa: E402
from gguf_io import KV  # noqa: E402

GGML_I32 = 26
gguf_io.GGML_TYPE_SIZE.setdefault(GGML_I32, (1, 4))


def corpus(name):
    path = HERE / "corpus" / name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def gguf_seeds(out):
    rng = np.random.default_rng(7)
    kvs = [
        ("general.architecture", KV(gguf_io.T_STRING, "llama")),
        ("general.alignment", KV(gguf_io.T_UINT32, 32)),
        ("llama.block_count", KV(gguf_io.T_UINT32, 1)),
        ("llama.context_length", KV(gguf_io.T_UINT64, 64)),
        ("llama.rope.freq_base", KV(gguf_io.T_FLOAT32, 10000.0)),
        ("ember.scale", KV(gguf_io.T_FLOAT64, 0.5)),
        ("ember.flag", KV(gguf_io.T_BOOL, True)),
        ("ember.small", KV(gguf_io.T_INT8, -3)),
        ("ember.short", KV(gguf_io.T_UINT16, 7)),
        ("ember.signed", KV(gguf_io.T_INT64, -9)),
        ("tokenizer.ggml.tokens", KV(gguf_io.T_ARRAY, ["<unk>", "<s>", "</s>", "\u2581a"], gguf_io.T_STRING)),
        ("tokenizer.ggml.scores", KV(gguf_io.T_ARRAY, [0.0, 0.0, 0.0, -1.0], gguf_io.T_FLOAT32)),
        ("tokenizer.ggml.token_type", KV(gguf_io.T_ARRAY, [2, 3, 3, 1], gguf_io.T_INT32)),
    ]
    f32 = rng.standard_normal(8).astype("<f4")
    f16 = rng.standard_normal(16).astype("<f2")
    q4 = bytes(rng.integers(0, 256, 18, dtype=np.uint8))
    q8 = bytes(rng.integers(0, 256, 34, dtype=np.uint8))
    tensors = [
        ("token_embd.weight", [8], gguf_io.GGML_F32, f32.tobytes()),
        ("blk.0.attn_norm.weight", [4, 4], gguf_io.GGML_F16, f16.tobytes()),
        ("blk.0.ffn_up.weight", [32], gguf_io.GGML_Q4_0, q4),
        ("blk.0.ffn_down.weight", [32], gguf_io.GGML_Q8_0, q8),
    ]
    gguf_io.write_gguf(out / "llama.gguf", kvs, tensors)
    gguf_io.write_gguf(out / "sparse.powerinfer.gguf", kvs[:5], tensors[:2], magic=b"PWRI")
    gguf_io.write_gguf(out / "metadata-only.gguf", kvs, [])
    # Version 2 stores counts as u64 like v3; version 1 (u32 counts) must be refused cleanly.
    v3 = (out / "llama.gguf").read_bytes()
    (out / "version2.gguf").write_bytes(v3[:4] + struct.pack("<I", 2) + v3[8:])
    (out / "version1.gguf").write_bytes(v3[:4] + struct.pack("<I", 1) + v3[8:])


def gpuidx_seeds(out):
    # Two layers of 64 neurons, as fuzz_gpuidx.cpp expects (format: engine/sparse/gpu_index.h).
    def write(path, hot_per_layer, source=None):
        kvs = [
            ("general.architecture", KV(gguf_io.T_STRING, "generic.gpu_index")),
            ("generic.gpu_index.block_count", KV(gguf_io.T_UINT32, 2)),
            ("split.vram_capacity", KV(gguf_io.T_UINT64, 4096)),
        ]
        if source is not None:
            kvs.append(("ember.gpu_index.source", KV(gguf_io.T_STRING, source)))
        tensors = []
        for il, hot in enumerate(hot_per_layer):
            mask = np.zeros(64, dtype="<i4")
            mask[hot] = 1
            tensors.append((f"blk.{il}.gpu_idx", [64], GGML_I32, mask.tobytes()))
            tensors.append((f"blk.{il}.gpu_bucket", [len(hot)], GGML_I32, np.asarray(hot, dtype="<i4").tobytes()))
        gguf_io.write_gguf(path, kvs, tensors, magic=b"PWRI")

    write(out / "half-hot.gpuidx", [list(range(0, 64, 2)), list(range(32))], source="model=tiny;budget=4096")
    write(out / "powerinfer.gpuidx", [[1, 5, 9], [0]])


def pt_seeds(out):
    data = ROOT / "tests" / "data" / "activation"
    for path in sorted(data.glob("*.pt")):
        shutil.copy(path, out / path.name)
    shutil.copy(ROOT / "resources" / "models" / "ember-demo" / "activation" / "activation_0.pt",
                out / "demo_activation_0.pt")


def hub_json_seeds(out):
    # First byte selects the parser (fuzz_hub_json.cpp): 0 search, 1 repo info, 2 tree page, 3 Link header.
    search = [{"id": "PowerInfer/ReluLLaMA-7B-PowerInfer-GGUF", "author": "PowerInfer", "downloads": 1200,
               "likes": 30, "lastModified": "2024-01-02T03:04:05.000Z", "tags": ["gguf"], "gated": False}]
    info = {"id": "PowerInfer/ReluLLaMA-7B-PowerInfer-GGUF", "sha": "0123456789abcdef0123456789abcdef01234567",
            "gated": "manual", "private": False,
            "siblings": [{"rfilename": "llama-7b-relu.powerinfer.gguf"}, {"rfilename": "activation/activation_0.pt"}]}
    tree = [{"type": "file", "path": "llama-7b-relu.powerinfer.gguf", "size": 13000000000, "oid": "a" * 40,
             "lfs": {"oid": "b" * 64, "size": 13000000000, "pointerSize": 134}},
            {"type": "directory", "path": "activation", "oid": "c" * 40, "size": 0},
            {"type": "file", "path": "config.json", "size": 612, "oid": "d" * 40}]
    link = '<https://huggingface.co/api/models/a/b/tree/main?cursor=abc>; rel="next"'
    (out / "search").write_bytes(b"\0" + json.dumps(search).encode())
    (out / "info").write_bytes(b"\1" + json.dumps(info).encode())
    (out / "tree").write_bytes(b"\2" + json.dumps(tree).encode())
    (out / "link").write_bytes(b"\3" + link.encode())


def tokenizer_seeds(out):
    # First byte selects the vocabulary (fuzz_tokenizer.cpp): even SentencePiece, odd GPT-2 BPE.
    texts = ["In the beginning God created the heaven and the earth.", "  leading spaces\nand\ttabs",
             "Grüße, 日本語, emoji 🔥 and <s> as text", "byte \xff\xfe mess".encode("latin-1").decode("latin-1")]
    for i, text in enumerate(texts):
        for vocab in (0, 1):
            (out / f"text{i}-{vocab}").write_bytes(bytes([vocab]) + text.encode("utf-8", "surrogateescape"))
    (out / "invalid-utf8-0").write_bytes(b"\0abc\xc3\x28\xe2\x82")


def chat_prompt_seeds(out):
    # First byte: format (0 completion, 1 Llama-2 chat, 2 ChatML, 3 Mistral); then NUL-separated system prompt and turns.
    for fmt in (0, 1, 2, 3):
        parts = ["You are helpful.", "Hello [INST] there", "Hi! <|im_end|>", "More?", ""]
        (out / f"format{fmt}").write_bytes(bytes([fmt]) + "\0".join(parts).encode())
    # First byte 4 or more: the rest is a chat template (the reference templates of the tests).
    templates = json.loads((HERE.parent / "data" / "chat_templates" / "cases.json").read_text())["templates"]
    for i, (name, source) in enumerate(sorted(templates.items())):
        (out / f"template-{name}").write_bytes(bytes([4 + i]) + source.encode())


def message_blocks_seeds(out):
    # First byte: the chunk size the answer streams in; then the answer.
    answers = [
        "<think>\nPlan.\n</think>\n\nHere:\n\n```python\nfor i in range(3):\n    print(i)  # \"x\"\n```\n\nDone.",
        "````js\nlet s = `a ${b}`; /* c */\n```\nstill code\n````\ntext ~~~\n~~~\nunterminated",
        "Before <think>inline</think> after\n  ```sql\nSELECT 1 -- one\n  ```\n",
    ]
    for i, answer in enumerate(answers):
        (out / f"answer{i}").write_bytes(bytes([i * 3]) + answer.encode())


def chat_import_seeds(out):
    # The shape app/store/chat_json_write.cpp exports: a branched tree, statistics, an interrupted answer.
    def message(mid, parent, role, content, status="complete", stats=None):
        m = {"id": mid, "parent": parent, "role": role, "content": content,
             "created": "2026-11-30T10:00:00.000Z", "status": status}
        if stats:
            m["stats"] = stats
        return m

    chats = [{
        "title": "Seed", "created": "2026-11-30T10:00:00.000Z", "updated": "2026-11-30T10:01:00.000Z",
        "pinned": True, "systemPrompt": "Be brief.", "settings": {"temperature": 0.7}, "modelPath": "/m.gguf",
        "activeLeaf": 3,
        "messages": [
            message(1, None, "user", "Hello"),
            message(2, 1, "assistant", "Hi", stats={"ttftMs": 12.5, "promptTokens": 3, "promptTps": 100.0,
                                                    "genTokens": 1, "genTps": 20.0, "stopReason": "eos"}),
            message(3, 1, "assistant", "Hel", status="interrupted"),
        ]}, {
        "title": "Empty", "created": "2026-11-30T10:00:00.000Z", "updated": "2026-11-30T10:00:00.000Z",
        "pinned": False, "systemPrompt": "", "settings": {}, "modelPath": "", "activeLeaf": None, "messages": []}]
    (out / "export.json").write_text(json.dumps({"format": "ember-chats", "version": 1, "chats": chats}, indent=1))


def api_request_seeds(out):
    # Byte 0 even: a request body (byte 1 odd: a chat); odd: text for the stop sequences.
    chat = {"model": "m", "messages": [{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "max_tokens": 16, "temperature": 0.7, "stop": ["\n", "###"], "stream": True,
            "stream_options": {"include_usage": True}}
    completion = {"prompt": [1, 2, 3], "n": 1, "top_k": 40, "top_p": 0.9, "min_p": 0.05, "seed": 42,
                  "repeat_penalty": 1.1, "ignore_eos": True}
    (out / "chat.json").write_bytes(b"\x00\x01" + json.dumps(chat).encode())
    (out / "completion.json").write_bytes(b"\x00\x00" + json.dumps(completion).encode())
    (out / "stops.txt").write_bytes(b"\x01\x00a quick xyz brown fox\n jumps over the lazy dog\n\nand then ab")


def calibration_seeds(build, target, models):
    """Seeds for fuzz_<target>: for each (model name, ember-synth-model arguments, [(seed name,
    ember-calibrate arguments)]), a 2-layer synthetic model (64 wide, 512 tokens) and the files
    ember-calibrate writes for it. The harness checks a file against its model's size, printed here.
    Without a build (BUILD_DIR/bin) the committed seeds are left as they are."""
    tools = pathlib.Path(build) / "bin"
    if not (tools / "ember-calibrate").exists():
        print(f"no {tools}/ember-calibrate: the {target} seeds are left as they are")
        return
    out = corpus(target)
    text = ROOT / "resources" / "calibration" / "calibration.txt"
    with tempfile.TemporaryDirectory() as tmp:
        for name, synth_args, seeds in models:
            model = pathlib.Path(tmp) / name
            subprocess.run([tools / "ember-synth-model", "-o", model, "--type", "F16", "--n-layer", "2", "--n-embd",
                            "64", "--n-head", "2", "--n-vocab", "512", *synth_args], check=True, capture_output=True)
            for seed, args in seeds:
                subprocess.run([tools / "ember-calibrate", "-m", model, "-f", text, "-c", "64", "-t", "2", "-o",
                                out / seed, *args], check=True, capture_output=True)
            print(f"{target}: seeds for {name}, {model.stat().st_size} bytes (fuzz_{target}.cpp's kModelBytes)")


def main():
    gguf_seeds(corpus("gguf"))
    gpuidx_seeds(corpus("gpuidx"))
    build = sys.argv[1] if len(sys.argv) > 1 else ROOT / "build"
    # 2 layers of 64 neurons: SiLU with every optional part (quality, speeds, layer costs), and
    # ReLU with the ladder alone.
    calibration_seeds(build, "sparsity", [
        ("tiny.gguf", ["--n-ff", "64"], [
            ("silu-measured.sparsity.gguf", ["--max-tokens", "512", "--quality-tokens", "128", "--speed-tokens", "4",
                                             "--layer-cost-tokens", "64"]),
            ("relu-ladder.sparsity.gguf", ["--max-tokens", "256", "--quality-tokens", "0", "--speed-tokens", "0",
                                           "--ffn-act", "relu"])])])
    # 2 layers of 4 experts (2 used) of 32 neurons, as SmallThinker (whose profile has the neurons'
    # firing too) and as Mixtral.
    calibration_seeds(build, "expert_profile", [
        (f"{arch}.gguf", ["--arch", arch, "--experts", "4", "--experts-used", "2", "--n-ff", "32"],
         [(f"{arch}.experts.gguf", ["--max-tokens", "256"])]) for arch in ("smallthinker", "mixtral")])
    pt_seeds(corpus("pt"))
    hub_json_seeds(corpus("hub_json"))
    tokenizer_seeds(corpus("tokenizer"))
    chat_prompt_seeds(corpus("chat_prompt"))
    message_blocks_seeds(corpus("message_blocks"))
    chat_import_seeds(corpus("chat_import"))
    api_request_seeds(corpus("api_request"))


if __name__ == "__main__":
    main()

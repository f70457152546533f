"""Unit tests of the Python toolchain (engine/convert/): file layout against PowerInfer's,
safetensors reading, activation files, predictor training, and bad-input errors.

Run by ctest (test_convert_py), or: /usr/bin/python3 -m unittest discover -s tests/convert
"""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "engine", "convert"))
sys.path.insert(0, os.path.join(ROOT, "tests", "data", "models"))
sys.path.insert(0, HERE)
import gguf_io as G  # noqa: E402  an independent GGUF reader
import make_tiny_models  # noqa: E402
from ember_convert import convert, profile, train_predictor  # noqa: E402
from ember_convert.errors import ConvertError  # noqa: E402
from ember_convert.safetensors_reader import read_safetensors  # noqa: E402

TOOLS = os.environ.get("EMBER_TOOLS_DIR", os.path.join(ROOT, "engine", "convert"))

# Key order of PowerInfer's convert.py with a predictor config.json (docs/FORMATS.md §2.1).
POWERINFER_KEYS = [
    "general.architecture", "general.name", "llama.context_length", "llama.embedding_length",
    "llama.block_count", "llama.feed_forward_length", "llama.rope.dimension_count",
    "llama.attention.head_count", "llama.attention.head_count_kv", "llama.attention.layer_norm_rms_epsilon",
    "llama.rope.freq_base", "general.file_type", "powerinfer.sparse_threshold", "tokenizer.ggml.model",
    "tokenizer.ggml.tokens", "tokenizer.ggml.scores", "tokenizer.ggml.token_type",
    "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"]


def read_json(path):
    with open(path, encoding="utf-8") as fp:
        return json.load(fp)


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as fp:
        json.dump(value, fp)


def tool(name, *args):
    return subprocess.run([os.path.join(TOOLS, name), *args], capture_output=True, text=True)


def rope_interleave(w, n_head):
    """Written independently of the converter: row j of head h in the file is HF row
    (j // 2) of the head's first half for even j, of its second half for odd j."""
    hd = w.shape[0] // n_head
    out = np.empty_like(w)
    for h in range(n_head):
        for j in range(hd):
            out[h * hd + j] = w[h * hd + (j // 2) + (hd // 2) * (j % 2)]
    return out


class ToolchainTest(unittest.TestCase):
    """Most tests call the tools' code in this process (each tool run starts torch anew, ~1.5 s);
    the command-line behaviour (exit status, one-line errors) is tested once per tool."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ember-convert-test-")
        make_tiny_models.make_all(cls.dir)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def path(self, *p):
        return os.path.join(self.dir, *p)

    def convert(self, arch, outtype="f16", dense=False):
        out = self.path("%s.%s.%s.test.gguf" % (arch, outtype, dense))
        convert.convert(self.path(arch), None if dense else self.path(arch + "-predictor"), out, outtype, dense)
        return G.GGUFFile(out)

    def convert_error(self, hf, pred):
        with self.assertRaises(ConvertError) as e:
            convert.convert(hf, pred, self.path("x.gguf"), "f16", pred is None)
        return str(e.exception)

    def hf_copy(self, arch):
        dst = self.path("copy-" + arch)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(self.path(arch), dst)
        shutil.rmtree(dst + "-predictor", ignore_errors=True)
        shutil.copytree(self.path(arch + "-predictor"), dst + "-predictor")
        return dst

    def assert_error(self, r, *words):
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)

    # ------------------------------------------------------------------ layout

    def test_sparse_llama_layout_is_powerinfers(self):
        f = self.convert("llama")
        hf = torch.load(self.path("llama", "pytorch_model.bin"))
        self.assertEqual(f.magic, b"PWRI")
        self.assertEqual(f.kv_order, POWERINFER_KEYS)
        self.assertEqual(f.value("powerinfer.sparse_threshold"), 0.0)
        self.assertEqual(f.value("general.file_type"), 1)
        layer = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down_t",
                 "attn_norm", "ffn_norm"]
        want = (["token_embd.weight"] + ["blk.%d.%s.weight" % (i, n) for i in range(2) for n in layer]
                + ["output_norm.weight", "output.weight"]
                + ["blk.%d.%s.weight" % (i, n) for i in range(2) for n in ("fc1", "fc2")])
        self.assertEqual(f.tensor_order, want)
        for name in want:
            self.assertEqual(f.tensors[name]["type"], G.GGML_F32 if "norm" in name else G.GGML_F16, name)
        f16 = lambda t: t.numpy().astype(np.float16).astype(np.float32)  # noqa: E731
        p = "model.layers.1."
        np.testing.assert_array_equal(f.array("blk.1.attn_q.weight"),
                                      rope_interleave(f16(hf[p + "self_attn.q_proj.weight"]), 4))
        np.testing.assert_array_equal(f.array("blk.1.attn_k.weight"),
                                      rope_interleave(f16(hf[p + "self_attn.k_proj.weight"]), 2))
        np.testing.assert_array_equal(f.array("blk.1.ffn_down_t.weight"), f16(hf[p + "mlp.down_proj.weight"]).T)
        np.testing.assert_array_equal(f.array("blk.1.attn_norm.weight"), hf[p + "input_layernorm.weight"].numpy())
        self.assertEqual(f.tensors["blk.1.ffn_down_t.weight"]["ne"], [64, 256])
        pred = torch.load(self.path("llama-predictor", "model_1.pt"))
        self.assertEqual(f.tensors["blk.1.fc1.weight"]["ne"], [64, 24])
        self.assertEqual(f.tensors["blk.1.fc2.weight"]["ne"], [24, 256])
        np.testing.assert_array_equal(f.array("blk.1.fc1.weight"), f16(pred["fc1.weight"]))
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=self.path("llama", "tokenizer.model"))
        self.assertEqual(f.value("tokenizer.ggml.tokens"), [sp.id_to_piece(i) for i in range(sp.vocab_size())])
        self.assertEqual(list(f.value("tokenizer.ggml.token_type")[:4]), [2, 3, 3, 6])

    def test_dense_layout(self):
        f = self.convert("bamboo", "f32", dense=True)
        self.assertEqual(f.magic, b"GGUF")
        self.assertEqual(f.value("general.architecture"), "bamboo")
        self.assertEqual(f.value("ember.ffn_activation"), "relu")
        self.assertEqual(f.value("general.file_type"), 0)
        self.assertNotIn("powerinfer.sparse_threshold", f.kv)
        self.assertNotIn("blk.0.fc1.weight", f.tensors)
        self.assertEqual(f.tensors["blk.0.ffn_down.weight"]["ne"], [256, 64])
        self.assertTrue(all(t["type"] == G.GGML_F32 for t in f.tensors.values()))

    def test_falcon_layout(self):
        f = self.convert("falcon")
        self.assertEqual(f.tensor_order[:4], ["blk.0.fc1.weight", "blk.0.fc2.weight", "blk.1.fc1.weight",
                                              "blk.1.fc2.weight"])
        self.assertEqual(f.value("falcon.tensor_data_layout"), "jploski")
        self.assertEqual(f.value("falcon.feed_forward_length"), 256)
        self.assertEqual(f.value("tokenizer.ggml.model"), "gpt2")
        self.assertEqual(f.value("tokenizer.ggml.merges"), ["h e", "Ġ t", "Ġt he"])
        self.assertEqual(f.value("tokenizer.ggml.token_type")[-1], 3)
        hf = read_safetensors(self.path("falcon", "model.safetensors"))
        groups = hf["transformer.h.0.self_attention.query_key_value.weight"].numpy().reshape(2, 4, 16, 64)
        # per KV group: 2 query heads, its key head, its value head -> all Q, all K, all V
        want = np.concatenate([groups[:, :2].reshape(-1, 64), groups[:, 2].reshape(-1, 64),
                               groups[:, 3].reshape(-1, 64)])
        np.testing.assert_array_equal(f.array("blk.0.attn_qkv.weight"), want.astype(np.float16).astype(np.float32))

    def test_safetensors_reader(self):
        path = self.path("t.safetensors")
        bf16 = np.array([0x3F80, 0xC000], dtype="<u2").tobytes()  # 1.0, -2.0
        head = json.dumps({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]},
                           "__metadata__": {"format": "pt"}}).encode()
        with open(path, "wb") as fp:
            fp.write(struct.pack("<Q", len(head)) + head + bf16)
        self.assertEqual(read_safetensors(path)["a"].tolist(), [1.0, -2.0])
        head = json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
        with open(path, "wb") as fp:
            fp.write(struct.pack("<Q", len(head)) + head + b"\0" * 4)
        with self.assertRaisesRegex(ConvertError, "t.safetensors: tensor a: data_offsets"):
            read_safetensors(path)

    # ------------------------------------------------------------------ bad input

    def test_cli_missing_config(self):
        d = self.hf_copy("llama")
        os.remove(os.path.join(d, "config.json"))
        self.assert_error(tool("ember-convert", d, "--dense", "-o", self.path("x.gguf")),
                          "ember-convert: error: ", d + "/config.json: missing config.json")

    def test_unknown_model_type(self):
        d = self.hf_copy("llama")
        cfg = read_json(os.path.join(d, "config.json"))
        cfg["model_type"] = "gpt_neox"
        write_json(os.path.join(d, "config.json"), cfg)
        self.assertIn("config.json: model_type 'gpt_neox' is not supported", self.convert_error(d, None))

    def test_non_relu_model(self):
        d = self.hf_copy("llama")
        cfg = read_json(os.path.join(d, "config.json"))
        cfg["hidden_act"] = "gelu"
        write_json(os.path.join(d, "config.json"), cfg)
        self.assertIn("config.json: hidden_act 'gelu': only ReLU", self.convert_error(d, d + "-predictor"))

    def test_swiglu_llama_converts_dense_only(self):
        """An ordinary SwiGLU llama (activation sparsity's test model) has no predictors: a sparse
        conversion is refused, a dense one says silu for Ember to read."""
        d = self.hf_copy("llama")
        cfg = read_json(os.path.join(d, "config.json"))
        cfg["hidden_act"] = "silu"
        write_json(os.path.join(d, "config.json"), cfg)
        self.assertIn("a silu model is not sparse: convert it with --dense", self.convert_error(d, d + "-predictor"))
        out = self.path("swiglu.gguf")
        convert.convert(d, None, out, "f16", True)
        f = G.GGUFFile(out)
        self.assertEqual(f.value("ember.ffn_activation"), "silu")
        self.assertEqual(f.tensors["blk.0.ffn_down.weight"]["ne"], [256, 64])

    def test_wrong_predictor_count(self):
        d = self.hf_copy("llama")
        os.remove(os.path.join(d + "-predictor", "model_1.pt"))
        msg = self.convert_error(d, d + "-predictor")
        self.assertIn(d + "-predictor: need model_0.pt .. model_1.pt for 2 layers, found 1", msg)

    def test_wrong_predictor_shape(self):
        d = self.hf_copy("llama")
        torch.save({"fc1.weight": torch.zeros(8, 64), "fc2.weight": torch.zeros(255, 8)},
                   os.path.join(d + "-predictor", "model_0.pt"))
        self.assertIn("model_0.pt: fc2.weight has shape [255, 8], expected [256, 8] (n_ff, r)",
                      self.convert_error(d, d + "-predictor"))

    # ------------------------------------------------------------------ profile, predictors

    def test_profile_writes_torch_vectors(self):
        out = self.path("activation")
        profile.profile(self.path("bamboo"), os.path.join(HERE, "corpus.txt"), out, max_tokens=512, n_ctx=64)
        self.assertEqual(sorted(os.listdir(out)), ["activation_0.pt", "activation_1.pt"])
        for il in range(2):
            t = torch.load(os.path.join(out, "activation_%d.pt" % il))
            self.assertEqual((t.dtype, tuple(t.shape)), (torch.float32, (256,)))
            self.assertTrue(bool((t >= 0).all()) and bool((t <= 512).all()) and float(t.sum()) > 0)

    def test_predictor_reaches_recall_on_synthetic_layer(self):
        """A layer whose neurons fire when a linear function of the normalized input passes
        a threshold: a rank-r predictor must reach the recall target on held-out rows."""
        torch.manual_seed(0)
        u = torch.randn(3000, 32) * 3
        w = torch.randn(128, 32)
        mask = (u / u.pow(2).mean(-1, keepdim=True).sqrt()) @ w.T > 1.0
        for target in (0.9, 0.97):
            pred, res = train_predictor.train_layer(u, mask, recall=target, ranks=(16, 32), epochs=12)
            self.assertGreaterEqual(res.recall, target - 0.01)
            # better than computing every neuron
            self.assertGreater(res.precision, 1 - res.sparsity + 0.1)
            self.assertEqual(tuple(pred.state_dict()["fc2.weight"].shape), (128, res.rank))

    def test_train_predictor_folder_converts(self):
        out = self.path("trained-predictor")
        r = tool("ember-train-predictor", self.path("llama"), os.path.join(HERE, "corpus.txt"), "-o", out,
                 "--ctx", "64", "--max-tokens", "1024", "--epochs", "2", "--ranks", "8,16")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("layer  1", r.stdout)
        self.assertIn("recall", r.stdout)
        self.assertEqual(read_json(os.path.join(out, "config.json")), {"sparse_threshold": -1.0})
        sd = torch.load(os.path.join(out, "model_0.pt"))
        self.assertEqual(sorted(sd), ["fc1.weight", "fc2.weight"])
        convert.convert(self.path("llama"), out, self.path("trained.gguf"))
        self.assertEqual(G.GGUFFile(self.path("trained.gguf")).value("powerinfer.sparse_threshold"), -1.0)


if __name__ == "__main__":
    unittest.main()

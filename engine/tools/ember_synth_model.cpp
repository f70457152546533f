// ember-synth-model: writes a random LLaMA-shaped GGUF (for benchmarks: a 7B-shaped model
// without downloading one). Weights are random but well-formed blocks; the vocabulary is a
// valid SentencePiece-style table of placeholder pieces.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>

#include "common/error.h"
#include "gguf/gguf_writer.h"
#include "tensor/dtype.h"
#include "tensor/fp16.h"
#include "tensor/quant_recipe.h"
#include "tensor/quantize.h"
#include "tensor/random_blocks.h"
#include "tensor/quant_blocks.h"
#include "tensor/thread_pool.h"
#include "tools/arg_parse.h"
#include "tools/hf_vocab.h"

namespace {

using namespace ember;

// erfc^-1 by bisection (setup only; erfc is monotonic).
double inverse_erfc(double y) {
    double lo = -6.0, hi = 6.0;
    for (int i = 0; i < 100; ++i) {
        const double mid = 0.5 * (lo + hi);
        (std::erfc(mid) > y ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

struct Shape {
    int n_vocab = 32000, n_embd = 4096, n_layer = 32, n_head = 32, n_head_kv = 32, n_ff = 11008, n_ctx = 4096;
    int rank = 0;              // > 0: a PowerInfer sparse file with predictors of this rank
    double active_share = 0.1; // the share of neurons the predictors should mark active
    std::string vocab_dir;     // a Hugging Face BPE tokenizer folder; empty: placeholder pieces
    std::string pre = "gpt-2"; // its tokenizer.ggml.pre
    bool llama3 = false;       // Llama 3.1's layout: rope_freqs.weight, no output.weight (tied LM head)
    std::string arch = "llama";  // or "qwen2": Q/K/V biases; "qwen3": per-head Q/K norms; "gemma2", "gemma3"
    int head_dim = 0;            // > 0: heads of this width, written as attention.key_length
    // --arch smallthinker: n_expert experts of n_ff neurons per layer, n_expert_used per token;
    // swa: the 21B model's layers (a sliding window in three of four, the fourth without RoPE).
    int n_expert = 8, n_expert_used = 2;
    bool swa = false;
    int64_t profiler_rank = 0;  // --lm-head-profiler: SmallThinker's LM head predictor of this rank
    float profiler_offset = 1.0f;  // --lm-head-offset: how many times the mean row it subtracts
    bool down_t = false;  // the experts' down weights transposed, a row per neuron (PowerInfer's layout)
    bool mixtral = false;  // --arch mixtral: a `llama` file with experts

    int n_expert_in_file() const { return arch == "smallthinker" || arch == "qwen3moe" || mixtral ? n_expert : 0; }
};

// fc2 rows whose scores s = fc2 · h (h >= 0, the ReLU of fc1 · u) are >= 0 for about `share`
// of the neurons: entries ~ N(-c·sd, sd) with c = z(share) / (k · sqrt(rank)), where
// k · sqrt(rank) estimates sum(h) / |h|. For the ReLU of a Gaussian k would be 1/sqrt(pi); the
// hidden states of these random models give k ≈ 0.94 (measured with ember-bench on 1024- and
// 4096-wide models), so the share is approximate: ember-bench reports the real one.
std::vector<uint8_t> predictor_fc2(tensor::DType t, int64_t rank, int64_t n_ff, double share, uint64_t seed,
                                   tensor::ThreadPool& pool) {
    const double z = std::sqrt(2.0) * inverse_erfc(2.0 * share);
    const float sd = 0.5f / std::sqrt(float(rank));
    const float mean = -float(z / (0.94 * std::sqrt(double(rank)))) * sd;
    const size_t row = tensor::row_bytes(t, rank);
    std::vector<uint8_t> out(row * size_t(n_ff));
    pool.run(n_ff, [&](int64_t r, int) {
        std::mt19937_64 rng(seed * 1000003u + uint64_t(r));
        std::normal_distribution<float> dist(mean, sd);
        std::vector<float> values(static_cast<size_t>(rank));
        for (auto& v : values) v = dist(rng);
        tensor::quantize_row(t, values.data(), out.data() + size_t(r) * row, rank);
    });
    return out;
}

// SmallThinker's lm_head_profiler for an LM head L (n_vocab rows of n_embd, type t), one Q4_0 row
// of W1 [rank][n_embd] then W2 [n_vocab][rank]: W1 is Gaussian with variance 1/n_embd and
// W2 = (n_embd / rank) · (L − b·L̄) · W1ᵀ, L̄ the mean row, so W2 · W1 · x is a random-projection
// estimate of each logit's distance from b times the mean logit. These random models' logits
// share a large positive offset: with b = 1 the sign picks about half of the rows, those most
// likely above the mean; a larger b picks fewer.
std::vector<uint8_t> lm_head_profiler(tensor::DType t, const std::vector<uint8_t>& head, int64_t n_embd,
                                      int64_t n_vocab, int64_t rank, float b, uint64_t seed, tensor::ThreadPool& pool) {
    std::vector<float> w1(size_t(rank * n_embd));
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f / std::sqrt(float(n_embd)));
    for (float& v : w1) v = dist(rng);
    const size_t w1_row = tensor::row_bytes(tensor::DType::Q4_0, n_embd), w2_row = tensor::row_bytes(tensor::DType::Q4_0, rank);
    std::vector<uint8_t> out(w1_row * size_t(rank) + w2_row * size_t(n_vocab));
    for (int64_t j = 0; j < rank; ++j)
        tensor::quantize_row(tensor::DType::Q4_0, w1.data() + j * n_embd, out.data() + size_t(j) * w1_row, n_embd);
    const size_t head_row = tensor::row_bytes(t, n_embd);
    std::vector<std::vector<double>> sums(size_t(pool.size()), std::vector<double>(size_t(n_embd)));
    pool.run(n_vocab, [&](int64_t v, int thread) {
        std::vector<float> row(static_cast<size_t>(n_embd));
        tensor::dequantize_row(t, head.data() + size_t(v) * head_row, row.data(), n_embd);
        for (int64_t k = 0; k < n_embd; ++k) sums[size_t(thread)][size_t(k)] += row[size_t(k)];
    });
    std::vector<float> mean(static_cast<size_t>(n_embd));
    for (const auto& s : sums)
        for (int64_t k = 0; k < n_embd; ++k) mean[size_t(k)] += float(s[size_t(k)] / double(n_vocab));
    const float scale = float(n_embd) / float(rank);
    pool.run(n_vocab, [&](int64_t v, int) {
        std::vector<float> row(static_cast<size_t>(n_embd)), w2(static_cast<size_t>(rank));
        tensor::dequantize_row(t, head.data() + size_t(v) * head_row, row.data(), n_embd);
        for (int64_t k = 0; k < n_embd; ++k) row[size_t(k)] -= b * mean[size_t(k)];
        for (int64_t j = 0; j < rank; ++j) {
            double sum = 0;
            for (int64_t k = 0; k < n_embd; ++k) sum += double(row[size_t(k)]) * w1[size_t(j * n_embd + k)];
            w2[size_t(j)] = scale * float(sum);
        }
        tensor::quantize_row(tensor::DType::Q4_0, w2.data(), out.data() + w1_row * size_t(rank) + size_t(v) * w2_row, rank);
    });
    return out;
}

// Random rows that decode to small weights in type t.
std::vector<uint8_t> random_tensor(tensor::DType t, int64_t n_cols, int64_t n_rows, uint64_t seed,
                                   tensor::ThreadPool& pool, float gain = 0.5f) {
    const size_t row = tensor::row_bytes(t, n_cols);
    std::vector<uint8_t> out(row * size_t(n_rows));
    const float scale = gain / std::sqrt(float(n_cols));
    pool.run(n_rows, [&](int64_t r, int) {
        std::mt19937_64 rng(seed * 1000003u + uint64_t(r));
        tensor::random_row(t, n_cols, scale, rng, out.data() + size_t(r) * row);
    });
    return out;
}

// n_expert matrices of `rows` rows of `cols` values (type t) as n_expert matrices of `cols` rows of
// `rows` values: the same weights, each expert transposed (exact for F32 and F16).
std::vector<uint8_t> transposed_experts(tensor::DType t, const std::vector<uint8_t>& bytes, int64_t cols, int64_t rows,
                                        int64_t n_expert) {
    const size_t in_row = tensor::row_bytes(t, cols), out_row = tensor::row_bytes(t, rows);
    std::vector<uint8_t> out(out_row * size_t(cols * n_expert));
    std::vector<float> m(size_t(rows * cols));
    std::vector<float> column(static_cast<size_t>(rows));
    for (int64_t e = 0; e < n_expert; ++e) {
        for (int64_t r = 0; r < rows; ++r)
            tensor::dequantize_row(t, bytes.data() + size_t(e * rows + r) * in_row, m.data() + size_t(r * cols), cols);
        for (int64_t c = 0; c < cols; ++c) {
            for (int64_t r = 0; r < rows; ++r) column[size_t(r)] = m[size_t(r * cols + c)];
            tensor::quantize_row(t, column.data(), out.data() + size_t(e * cols + c) * out_row, rows);
        }
    }
    return out;
}

// A valid SentencePiece-style table of placeholder pieces.
void write_placeholder_vocab(gguf::Writer& w, int n_vocab) {
    gguf::Array tokens{gguf::ValueType::String, {}, {}, {}};
    gguf::Array scores{gguf::ValueType::F32, {}, {}, {}};
    gguf::Array types{gguf::ValueType::I32, {}, {}, {}};
    auto add = [&](std::string piece, float score, int type) {
        tokens.strings.push_back(std::move(piece));
        scores.floats.push_back(score);
        types.ints.push_back(type);
    };
    add("<unk>", 0, 2);
    add("<s>", 0, 3);
    add("</s>", 0, 3);
    for (int b = 0; b < 256; ++b) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "<0x%02X>", b);
        add(buf, 0, 6);
    }
    for (int i = int(tokens.strings.size()); i < n_vocab; ++i) add("\xE2\x96\x81t" + std::to_string(i), -float(i), 1);
    w.set("tokenizer.ggml.model", gguf::Value::string("llama"));
    w.set("tokenizer.ggml.tokens", gguf::Value::array(std::move(tokens)));
    w.set("tokenizer.ggml.scores", gguf::Value::array(std::move(scores)));
    w.set("tokenizer.ggml.token_type", gguf::Value::array(std::move(types)));
    w.set("tokenizer.ggml.bos_token_id", gguf::Value::u32(1));
    w.set("tokenizer.ggml.eos_token_id", gguf::Value::u32(2));

}

// --type: one type for every matrix, or one of llama.cpp's mixes (Q4_K_M, …) chosen per tensor
// as ember-quantize chooses it.
struct TypeMix {
    tensor::DType base;
    std::optional<tensor::QuantRecipe> recipe;

    tensor::DType of(const std::string& name, std::vector<int64_t> ne, int il, const Shape& s, bool tied) const {
        if (!recipe) return base;
        const tensor::RecipeModel model{s.arch, s.n_layer, s.n_head, s.n_head_kv, s.n_expert_in_file()};
        const tensor::RecipePosition position{il, s.n_layer, il, tied};
        return tensor::recipe_type(*recipe, model, {name, std::move(ne), base}, position, false);
    }
};

std::optional<TypeMix> type_mix(const std::string& name) {
    if (name.size() > 2 && name[name.size() - 2] == '_' && (name.back() == 'M' || name.back() == 'S'))
        if (const auto recipe = tensor::find_quant_recipe(name)) return TypeMix{recipe->base, recipe};
    const std::optional<tensor::DType> t = tensor::dtype_from_name(name);
    if (!t) return std::nullopt;
    return TypeMix{*t, std::nullopt};
}

void write_model(const std::string& path, Shape s, const TypeMix& mix) {
    const tensor::DType t = mix.base;
    gguf::Writer w;
    w.set("general.architecture", gguf::Value::string(s.arch));
    const std::string a = s.arch + ".";
    w.set("general.name", gguf::Value::string("ember synthetic"));
    w.set("general.alignment", gguf::Value::u32(32));
    w.set(a + "context_length", gguf::Value::u32(uint32_t(s.n_ctx)));
    w.set(a + "embedding_length", gguf::Value::u32(uint32_t(s.n_embd)));
    w.set(a + "block_count", gguf::Value::u32(uint32_t(s.n_layer)));
    w.set(a + "feed_forward_length", gguf::Value::u32(uint32_t(s.n_ff)));
    w.set(a + "attention.head_count", gguf::Value::u32(uint32_t(s.n_head)));
    w.set(a + "attention.head_count_kv", gguf::Value::u32(uint32_t(s.n_head_kv)));
    w.set(a + "attention.layer_norm_rms_epsilon", gguf::Value::f32(1e-5f));
    w.set(a + "rope.freq_base", gguf::Value::f32(10000.0f));
    const int64_t head_dim = s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head;
    if (s.head_dim > 0 || s.arch == "qwen3" || s.arch == "qwen3moe") {
        w.set(a + "attention.key_length", gguf::Value::u32(uint32_t(head_dim)));
        w.set(a + "attention.value_length", gguf::Value::u32(uint32_t(head_dim)));
    }
    const bool gemma = s.arch == "gemma2" || s.arch == "gemma3";
    if (gemma) {
        // Gemma's pattern, shortened so a small model has both kinds of layer: even layers attend
        // to a window of 8 positions (Gemma 3: with base 10000), odd layers to everything.
        w.set(a + "attention.sliding_window", gguf::Value::u32(8));
        w.set(a + "attention.sliding_window_pattern", gguf::Value::u32(2));
        if (s.arch == "gemma3") {
            w.set(a + "rope.freq_base", gguf::Value::f32(1000000.0f));
            w.set(a + "rope.freq_base_swa", gguf::Value::f32(10000.0f));
        } else {
            // Caps low enough to bite on a random model's scores and logits (Gemma 2 has 50 and 30).
            w.set(a + "attn_logit_softcapping", gguf::Value::f32(0.25f));
            w.set(a + "final_logit_softcapping", gguf::Value::f32(15.0f));
        }
        w.set(a + "attention.key_length", gguf::Value::u32(uint32_t(head_dim)));
        w.set(a + "attention.value_length", gguf::Value::u32(uint32_t(head_dim)));
    }
    const bool moe = s.n_expert_in_file() > 0;
    if (moe) {
        w.set(a + "expert_count", gguf::Value::u32(uint32_t(s.n_expert)));
        w.set(a + "expert_used_count", gguf::Value::u32(uint32_t(s.n_expert_used)));
        w.set(a + "expert_feed_forward_length", gguf::Value::u32(uint32_t(s.n_ff)));
    }
    if (s.arch == "smallthinker") {
        w.set(a + "expert_gating_func", gguf::Value::u32(1));  // softmax, as SmallThinker's config
        if (s.swa) w.set(a + "attention.sliding_window", gguf::Value::u32(4096));
    }
    const bool phi3 = s.arch == "phi3";
    if (phi3) {
        // Phi 3.5's long-context RoPE: long factors past 256 positions of context (so the 512-token
        // contexts of the tests use them) and the attention factor its converter writes.
        w.set(a + "rope.scaling.original_context_length", gguf::Value::u32(256));
        w.set(a + "rope.scaling.attn_factor", gguf::Value::f32(1.19f));
    }
    if (!s.vocab_dir.empty()) s.n_vocab = int(tools::write_hf_vocab(w, s.vocab_dir, s.pre));
    else write_placeholder_vocab(w, s.n_vocab);
    if (gemma) w.set("tokenizer.ggml.add_space_prefix", gguf::Value::boolean(false));

    tensor::ThreadPool pool(tensor::default_thread_count());
    uint64_t seed = 1;
    const uint32_t type_id = uint32_t(t);
    int il = 0;
    // A tied LM head needs the output matrix's spread (below) in the embeddings.
    const bool tied = s.llama3 || gemma;
    auto matrix = [&](const std::string& name, int64_t cols, int64_t rows, float gain = 0.5f) {
        const tensor::DType type = mix.of(name, {cols, rows}, il, s, tied);
        w.add_tensor(name, {cols, rows}, uint32_t(type), random_tensor(type, cols, rows, seed++, pool, gain));
    };
    // An F32 vector of n values ~ N(mean, sd): biases around 0, norm weights around 1 (not 1: a
    // weight applied to the wrong element then shows in the output).
    auto vector = [&](const std::string& name, int64_t n, float mean, float sd) {
        std::mt19937_64 rng(seed++);
        std::normal_distribution<float> dist(mean, sd);
        std::vector<uint8_t> bytes(size_t(n) * 4);
        for (int64_t i = 0; i < n; ++i) {
            const float v = dist(rng);
            std::memcpy(bytes.data() + 4 * i, &v, 4);
        }
        w.add_tensor(name, {n}, 0, std::move(bytes));
    };
    auto bias = [&](const std::string& name, int64_t n) { vector(name, n, 0.0f, 0.2f); };
    auto near_one = [&](const std::string& name, int64_t n) { vector(name, n, 1.0f, 0.2f); };
    auto ones = [&](const std::string& name, int64_t n) {
        std::vector<uint8_t> bytes(size_t(n) * 4);
        const float one = 1.0f;
        for (int64_t i = 0; i < n; ++i) std::memcpy(bytes.data() + 4 * i, &one, 4);
        w.add_tensor(name, {n}, 0, std::move(bytes));
    };
    const int64_t n_q = head_dim * s.n_head, n_gqa = head_dim * s.n_head_kv;
    matrix("token_embd.weight", s.n_embd, s.n_vocab, tied ? 4.0f : 0.5f);
    ones("output_norm.weight", s.n_embd);
    if (s.llama3) {
        // Factors as Llama 3.1's scaling gives them: 1 for the fast dimensions, up to 8 for the slow.
        const int64_t half = head_dim / 2;
        std::vector<uint8_t> bytes(size_t(half) * 4);
        for (int64_t j = 0; j < half; ++j) {
            const float f = 1.0f + 7.0f * float(j) / float(half - 1);
            std::memcpy(bytes.data() + 4 * j, &f, 4);
        }
        w.add_tensor("rope_freqs.weight", {half}, 0, std::move(bytes));
        w.set(a + "rope.freq_base", gguf::Value::f32(500000.0f));
    }
    if (phi3) {
        // Short factors near 1, long ones rising to 8 over the slow dimensions.
        const int64_t half = head_dim / 2;
        for (const auto& [name, top] : {std::pair{"rope_factors_short.weight", 1.5f}, std::pair{"rope_factors_long.weight", 8.0f}}) {
            std::vector<uint8_t> bytes(size_t(half) * 4);
            for (int64_t j = 0; j < half; ++j) {
                const float f = 1.0f + (top - 1.0f) * float(j) / float(half - 1);
                std::memcpy(bytes.data() + 4 * j, &f, 4);
            }
            w.add_tensor(name, {half}, 0, std::move(bytes));
        }
    }
    // Logits with a spread of ~4 (the normalized hidden state has unit RMS): next-token
    // distributions as peaked as a trained model's, so a greedy choice is rarely a near tie.
    if (!tied) {
        const tensor::DType type = mix.of("output.weight", {s.n_embd, s.n_vocab}, il, s, tied);
        std::vector<uint8_t> head = random_tensor(type, s.n_embd, s.n_vocab, seed++, pool, 4.0f);
        if (s.profiler_rank > 0)
            w.add_tensor("lm_head_profiler.weight", {s.profiler_rank * (s.n_embd + s.n_vocab)}, uint32_t(tensor::DType::Q4_0),
                         lm_head_profiler(type, head, s.n_embd, s.n_vocab, s.profiler_rank, s.profiler_offset, seed++, pool));
        w.add_tensor("output.weight", {s.n_embd, s.n_vocab}, uint32_t(type), std::move(head));
    }
    for (il = 0; il < s.n_layer; ++il) {
        const std::string p = "blk." + std::to_string(il) + ".";
        if (phi3) {
            matrix(p + "attn_qkv.weight", s.n_embd, n_q + 2 * n_gqa);
        } else {
            matrix(p + "attn_q.weight", s.n_embd, n_q);
            matrix(p + "attn_k.weight", s.n_embd, n_gqa);
            matrix(p + "attn_v.weight", s.n_embd, n_gqa);
        }
        if (s.arch == "qwen2") {
            bias(p + "attn_q.bias", n_q);
            bias(p + "attn_k.bias", n_gqa);
            bias(p + "attn_v.bias", n_gqa);
        }
        if (s.arch == "qwen3" || s.arch == "qwen3moe" || s.arch == "gemma3") {
            near_one(p + "attn_q_norm.weight", head_dim);
            near_one(p + "attn_k_norm.weight", head_dim);
        }
        if (gemma) {
            near_one(p + "post_attention_norm.weight", s.n_embd);
            near_one(p + "post_ffw_norm.weight", s.n_embd);
        }
        matrix(p + "attn_output.weight", n_q, s.n_embd);
        if (moe) {
            // The router stays F32, as llama.cpp's quantizer leaves it; its logits spread as a
            // trained router's do (the input's RMS is far below 1), so a top-k choice is rarely a near tie.
            w.add_tensor(p + "ffn_gate_inp.weight", {s.n_embd, s.n_expert}, 0,
                         random_tensor(tensor::DType::F32, s.n_embd, s.n_expert, seed++, pool, 32.0f));
            const auto experts = [&](const std::string& name, int64_t cols, int64_t rows) {
                const tensor::DType type = mix.of(name, {cols, rows, s.n_expert}, il, s, tied);
                w.add_tensor(name, {cols, rows, s.n_expert}, uint32_t(type),
                             random_tensor(type, cols, rows * s.n_expert, seed++, pool));
            };
            experts(p + "ffn_gate_exps.weight", s.n_embd, s.n_ff);
            experts(p + "ffn_up_exps.weight", s.n_embd, s.n_ff);
            if (s.down_t)
                w.add_tensor(p + "ffn_down_exps.weight", {s.n_embd, s.n_ff, s.n_expert}, type_id,
                             transposed_experts(t, random_tensor(t, s.n_ff, s.n_embd * s.n_expert, seed++, pool), s.n_ff,
                                                s.n_embd, s.n_expert));
            else
                experts(p + "ffn_down_exps.weight", s.n_ff, s.n_embd);
        } else if (phi3) {
            matrix(p + "ffn_up.weight", s.n_embd, 2 * s.n_ff);  // the gate's rows, then up's
        } else {
            matrix(p + "ffn_gate.weight", s.n_embd, s.n_ff);
            matrix(p + "ffn_up.weight", s.n_embd, s.n_ff);
        }
        if (s.rank > 0) {
            matrix(p + "ffn_down_t.weight", s.n_embd, s.n_ff);
            matrix(p + "fc1.weight", s.n_embd, s.rank);
            w.add_tensor(p + "fc2.weight", {s.rank, s.n_ff}, type_id,
                         predictor_fc2(t, s.rank, s.n_ff, s.active_share, seed++, pool));
        } else if (!moe) {
            matrix(p + "ffn_down.weight", s.n_ff, s.n_embd);
        }
        ones(p + "attn_norm.weight", s.n_embd);
        ones(p + "ffn_norm.weight", s.n_embd);
    }
    if (s.rank > 0) w.set("powerinfer.sparse_threshold", gguf::Value::f32(0.0f));
    w.write(path, s.rank > 0 ? "PWRI" : "GGUF");
}

}  // namespace

int main(int argc, char** argv) {
    using namespace ember::tools;
    std::string out;
    std::string type = "Q4_0";
    Shape shape;
    try {
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            auto count = [&](long long max) { return int(parse_int(a, next_value(argc, argv, i), 1, max)); };
            if (a == "-o") out = next_value(argc, argv, i);
            else if (a == "--type") type = next_value(argc, argv, i);
            else if (a == "--n-layer") shape.n_layer = count(256);
            else if (a == "--n-embd") shape.n_embd = count(65536);
            else if (a == "--n-head") shape.n_head = shape.n_head_kv = count(1024);
            else if (a == "--n-head-kv") shape.n_head_kv = count(1024);
            else if (a == "--head-dim") shape.head_dim = count(4096);
            else if (a == "--n-ff") shape.n_ff = count(1 << 20);
            else if (a == "--n-vocab") shape.n_vocab = count(1 << 20);
            else if (a == "--sparse-rank") shape.rank = count(1 << 16);
            else if (a == "--vocab") shape.vocab_dir = next_value(argc, argv, i);
            else if (a == "--pre") shape.pre = next_value(argc, argv, i);
            else if (a == "--llama3") shape.llama3 = true;
            else if (a == "--experts") shape.n_expert = count(256);
            else if (a == "--experts-used") shape.n_expert_used = count(256);
            else if (a == "--swa") shape.swa = true;
            else if (a == "--down-t") shape.down_t = true;
            else if (a == "--lm-head-profiler") shape.profiler_rank = count(1 << 16);
            else if (a == "--lm-head-offset") shape.profiler_offset = parse_float(a, next_value(argc, argv, i));
            else if (a == "--arch") {
                shape.arch = next_value(argc, argv, i);
                shape.mixtral = shape.arch == "mixtral";
                if (shape.mixtral) shape.arch = "llama";
                if (shape.arch != "llama" && shape.arch != "qwen2" && shape.arch != "qwen3" && shape.arch != "gemma2" &&
                    shape.arch != "gemma3" && shape.arch != "phi3" && shape.arch != "smallthinker" &&
                    shape.arch != "qwen3moe")
                    throw UsageError("--arch must be llama, mixtral, qwen2, qwen3, qwen3moe, phi3, gemma2, gemma3 or smallthinker");
            }
            else if (a == "--active-share") {
                shape.active_share = parse_float(a, next_value(argc, argv, i));
                if (!(shape.active_share > 0.0 && shape.active_share < 1.0))
                    throw UsageError("--active-share must be in (0, 1)");
            }
            else throw UsageError("unknown argument '" + a + "'");
        }
        if (out.empty()) throw UsageError("no output: give -o OUT.gguf");
        if (shape.n_expert_used > shape.n_expert) throw UsageError("--experts-used must be at most --experts");
        if (shape.profiler_rank > 0 && (shape.arch != "smallthinker" || shape.profiler_rank % 32 != 0 || shape.n_embd % 32 != 0))
            throw UsageError("--lm-head-profiler takes a rank that is a multiple of 32, with --arch smallthinker");
        if ((shape.arch == "smallthinker" || shape.arch == "qwen3moe" || shape.mixtral) && shape.rank > 0)
            throw UsageError("--arch " + shape.arch + " has no --sparse-rank");
    } catch (const UsageError& e) {
        std::fprintf(stderr,
                     "ember-synth-model: %s\nusage: ember-synth-model -o OUT.gguf [--type TYPE] "
                     "[--n-layer N] [--n-embd N] [--n-head N] [--n-head-kv N] [--head-dim N] [--n-ff N] [--n-vocab N]\n"
                     "       [--sparse-rank R [--active-share 0.1]] [--vocab HF_TOKENIZER_DIR [--pre NAME]] [--llama3] [--arch llama|mixtral|qwen2|qwen3|qwen3moe|phi3|gemma2|gemma3|smallthinker]\n"
                     "       [--experts 8 --experts-used 2 [--swa] [--down-t] [--lm-head-profiler R [--lm-head-offset 1]]]\n"
                     "(defaults: a LLaMA-7B shape, Q4_0, dense; --sparse-rank writes a PowerInfer file with\n"
                     "predictors of rank R that mark about --active-share of the FFN neurons active; --vocab takes\n"
                     "the vocabulary of a Hugging Face tokenizer: byte-level BPE (tokenizer.ggml.pre = --pre) or, with byte\n"
                     "fallback, a converted SentencePiece model (Gemma's); --llama3 writes\n"
                     "Llama 3.1's layout: RoPE frequency factors and base 500000, the LM head tied to the embeddings;\n"
                     "--arch qwen2 writes Qwen 2's graph, with Q/K/V biases; --arch qwen3 Qwen 3's, with per-head Q/K norms;\n"
                     "--arch gemma2 and gemma3 Gemma's, with post-norms, GeGLU and sliding-window layers, the LM head tied;\n"
                     "--arch phi3 Phi 3.5's, with fused QKV and gate-up matrices and long-context RoPE factors;\n"
                     "--arch smallthinker SmallThinker's mixture of --experts ReGLU experts of --n-ff neurons, --experts-used\n"
                     "per token; --swa its 21B layers (a 4096-token window in three of four, the fourth without RoPE);\n"
                     "--down-t stores the experts' down weights transposed, a row per neuron (PowerInfer's layout);\n"
                     "--lm-head-profiler R adds PowerInfer's rank-R predictor of the LM head rows a token needs (Q4_0),\n"
                     "which picks about half of them; a larger --lm-head-offset picks fewer;\n"
                     "--arch qwen3moe Qwen 3's graph with a mixture of SwiGLU experts (the same flags); --arch mixtral\n"
                     "a llama file with them, as Mixtral's;\n"
                     "--head-dim sets the heads' width when it is not n_embd / n_head)\n",
                     e.what());
        return 2;
    }
    const std::optional<TypeMix> mix = type_mix(type);
    // A sparse file's predictor rows are quantized from floats: only types with a quantizer.
    const tensor::DType t = mix ? mix->base : tensor::DType::BF16;
    const bool writable = mix && t != tensor::DType::BF16 && t != tensor::DType::Q8_K &&
                          (shape.rank == 0 || (!mix->recipe && (t == tensor::DType::F32 || t == tensor::DType::F16 ||
                                                             t == tensor::DType::Q4_0 || t == tensor::DType::Q8_0)));
    if (!writable) {
        std::fprintf(stderr, "ember-synth-model: --type '%s' is not one it writes (F32, F16, Q4_0, Q8_0; dense files also "
                             "Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, and the mixes Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M)\n", type.c_str());
        return 2;
    }
    try {
        write_model(out, shape, *mix);
    } catch (const EngineError& e) {
        std::fprintf(stderr, "ember-synth-model: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "ember-synth-model: wrote %s\n", out.c_str());
    return 0;
}

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "backend/device_memory.h"
#include "common/byte_size.h"
#include "common/error.h"
#include "ember/fit.h"
#include "gguf/gguf_reader.h"
#include "model/architecture.h"
#include "model/scratch.h"
#include "sparse/placement.h"
#include "tensor/dtype.h"
#include "tensor/thread_pool.h"
#include "tokenizer/pretokenizer.h"
#include "tokenizer/vocab.h"

namespace ember {

namespace {

int32_t required(const gguf::File& f, const std::string& key, uint64_t max) {
    const auto v = f.get_uint(key);
    if (!v || *v == 0 || *v > max) fail(f.path() + ": metadata key '" + key + "' is missing or out of range");
    return int32_t(*v);
}

// "blk.12.attn_q.weight" -> layer 12 and "attn_q"; -1 for tensors outside the blocks.
int32_t block_of(const std::string& name, std::string* part) {
    if (name.rfind("blk.", 0) != 0) return -1;
    const size_t dot = name.find('.', 4);
    if (dot == std::string::npos) return -1;
    int32_t il = 0;
    for (size_t i = 4; i < dot; ++i) {
        if (name[i] < '0' || name[i] > '9' || il > 100000) return -1;
        il = il * 10 + (name[i] - '0');
    }
    const size_t end = name.find('.', dot + 1);
    *part = name.substr(dot + 1, end == std::string::npos ? std::string::npos : end - dot - 1);
    return il;
}

// A dense model places whole layers, as the session does.
Fit dense_fit(const sparse::Placement& p, int32_t n_layer, Fit fit) {
    fit.neuron_share = n_layer > 0 ? double(p.n_ffn_layers) / double(n_layer) : 0.0;
    if (p.n_ffn_layers == n_layer && p.output_on_device) {
        fit.kind = FitKind::AllOnGpu;
        fit.text = "all on GPU";
    } else if (p.n_ffn_layers > 0) {
        fit.kind = FitKind::Hybrid;
        fit.text = "hybrid: " + std::to_string(p.n_ffn_layers) + " of " + std::to_string(n_layer) + " layers on GPU";
    } else {
        fit.text = "CPU only (GPU budget too small)";
    }
    return fit;
}

// A mixture of experts: once the dense parts, the LM head and the KV cache fit, whole experts in
// the rest of the budget, or single neurons where the session places them so, as it does.
Fit moe_fit(const sparse::Placement& p, const ModelFootprint& fp, Fit fit) {
    if (p.n_ffn_layers < fp.n_layer || !p.output_on_device) return dense_fit(p, fp.n_layer, fit);
    uint64_t left = p.budget_bytes - p.bytes_used;
    const int64_t per_layer = int64_t(fp.n_expert) * fp.expert_ff;
    int64_t placed = 0;  // neurons
    bool by_neuron = false;
    for (size_t l = 0; l < fp.expert_bytes.size(); ++l) {
        by_neuron = by_neuron || fp.expert_neuron_bytes[l] > 0;
        const uint64_t each = fp.expert_neuron_bytes[l] > 0 ? fp.expert_neuron_bytes[l] : fp.expert_bytes[l] / uint64_t(fp.n_expert);
        const uint64_t most = fp.expert_neuron_bytes[l] > 0 ? uint64_t(per_layer) : uint64_t(fp.n_expert);
        const uint64_t n = each > 0 ? std::min<uint64_t>(most, left / each) : most;
        placed += int64_t(n) * (fp.expert_neuron_bytes[l] > 0 ? 1 : fp.expert_ff);
        left -= n * each;
    }
    fit.neuron_share = double(placed) / double(per_layer * fp.n_layer);
    fit.kind = fit.neuron_share >= 1.0 ? FitKind::AllOnGpu : FitKind::Hybrid;
    fit.text = fit.neuron_share >= 1.0 ? "all on GPU"
               : placed == 0           ? "hybrid: dense parts on GPU, every expert on the CPU"
                                       : "hybrid: dense parts and " + std::to_string(int(std::floor(fit.neuron_share * 100.0))) +
                                   (by_neuron ? " % of the experts' neurons on GPU" : " % of the experts on GPU");
    return fit;
}

// The first reason Model::load would refuse the file, from its header (whose heads are head_dim
// wide); empty when there is none.
std::string why_not_runnable(const gguf::File& f, uint64_t head_dim) {
    const std::string arch = f.get_string("general.architecture").value_or("");
    if (!model::architecture_supported(arch)) return "architecture " + arch + " is not supported";
    if (const auto n_rot = f.get_uint(arch + ".rope.dimension_count"); n_rot && *n_rot != head_dim)
        return "RoPE on part of each head (" + std::to_string(*n_rot) + " of " + std::to_string(head_dim) +
               " dimensions) is not supported";
    for (const gguf::TensorInfo& t : f.tensors())
        if (t.ne.size() >= 2 && !tensor::dtype_from_ggml(t.type))
            return gguf::ggml_type_name(t.type) + " weights are not supported (tensor " + t.name + ")";
    const std::string tok = f.get_string("tokenizer.ggml.model").value_or("");
    const std::optional<tokenizer::VocabKind> kind = tokenizer::vocab_kind_from_model(tok);
    if (!kind) return "tokenizer " + (tok.empty() ? std::string("(none)") : tok) + " is not supported";
    if (const auto pre = f.get_string("tokenizer.ggml.pre");
        pre && *kind == tokenizer::VocabKind::Bpe && !tokenizer::pre_tokenizer_from_name(*pre))
        return "pre-tokenizer " + *pre + " is not supported";
    return {};
}

}  // namespace

Result<ModelFootprint> read_footprint(const std::string& header_path, uint64_t full_size) {
    try {
        const auto file = gguf::File::open_header(header_path, full_size);
        ModelFootprint fp;
        const auto arch = file->get_string("general.architecture");
        if (!arch) fail(header_path + ": missing metadata key 'general.architecture'");
        fp.architecture = *arch;
        const std::string p = *arch + ".";
        fp.n_layer = required(*file, p + "block_count", 1024);
        fp.n_ctx_train = required(*file, p + "context_length", 1u << 24);
        const int32_t n_embd = required(*file, p + "embedding_length", 1u << 16);
        const int32_t n_head = required(*file, p + "attention.head_count", 1u << 12);
        const int32_t n_head_kv = file->find(p + "attention.head_count_kv")
                                      ? required(*file, p + "attention.head_count_kv", uint64_t(n_head))
                                      : n_head;
        const int32_t n_ff = required(*file, p + "feed_forward_length", 1u << 20);
        const uint64_t head_dim = file->find(p + "attention.key_length") ? required(*file, p + "attention.key_length", 1u << 12)
                                                                         : uint64_t(n_embd / n_head);
        const uint64_t n_gqa = head_dim * uint64_t(n_head_kv);
        fp.kv_bytes_per_token = 2 * uint64_t(fp.n_layer) * n_gqa * 2;
        // As a session sizes its buffers (model/scratch.cpp), from the shape its loader reads.
        model::HParams shape;
        shape.n_embd = n_embd;
        shape.n_head = n_head;
        shape.n_head_kv = n_head_kv;
        shape.n_ff = n_ff;
        shape.n_embd_head = int32_t(head_dim);
        shape.fused_qkv = file->find_tensor("blk.0.attn_qkv.weight") != nullptr;
        if (*arch == "gemma2" || *arch == "gemma3" || *arch == "smallthinker")
            shape.n_swa = int32_t(model::optional_uint(*file, p + "attention.sliding_window", *arch == "gemma2" ? 4096 : 0));
        shape.n_expert = int32_t(model::optional_uint(*file, p + "expert_count", 0));
        shape.n_expert_used = int32_t(model::optional_uint(*file, p + "expert_used_count", 0));
        fp.scratch_bytes_per_token = model::scratch_bytes_per_token(shape);
        fp.head_dim = int32_t(head_dim);
        fp.n_embd = n_embd;
        fp.n_q = int64_t(head_dim) * n_head;
        fp.n_gqa = int64_t(n_gqa);
        // A mixture of experts computes experts of their own width (the loader's n_ff).
        const int64_t expert_ff = shape.n_expert > 0 ? int64_t(model::optional_uint(*file, p + "expert_feed_forward_length", uint32_t(n_ff))) : n_ff;
        fp.n_ff_per_token = expert_ff * std::max(shape.n_expert_used, 1);
        fp.n_head = n_head;
        if (const gguf::TensorInfo* embd = file->find_tensor("token_embd.weight"); embd && embd->ne.size() == 2)
            fp.n_vocab = embd->ne[1];

        const size_t L = size_t(fp.n_layer);
        fp.attn_bytes.assign(L, 0);
        fp.predictor_bytes.assign(L, 0);
        fp.ffn_norm_bytes.assign(L, 0);
        fp.neuron_bytes.assign(L, 0);
        fp.dense_ffn_bytes.assign(L, 0);
        fp.expert_bytes.assign(L, 0);
        fp.expert_neuron_bytes.assign(L, 0);
        if (file->find(p + "expert_count")) fp.n_expert = required(*file, p + "expert_count", 1u << 16);
        fp.expert_ff = expert_ff;
        // A neuron's up row and, in PowerInfer's transposed layout, its down row.
        std::vector<uint64_t> up_row(L, 0), down_t_row(L, 0);
        fp.n_ff.assign(L, n_ff);
        bool has_output = false;
        uint64_t embd_bytes = 0;
        for (const gguf::TensorInfo& t : file->tensors()) {
            fp.weight_bytes += t.nbytes;
            std::string part;
            const int32_t il = block_of(t.name, &part);
            if (il < 0) {
                if (t.name == "output.weight") has_output = true;
                if (t.name == "token_embd.weight") embd_bytes = t.nbytes;
                if (t.name.rfind("output", 0) == 0) fp.output_bytes += t.nbytes;
                continue;
            }
            if (il >= fp.n_layer) fail(header_path + ": tensor '" + t.name + "' is past block_count");
            const size_t l = size_t(il);
            if (part == "fc1" || part == "fc2") {
                fp.sparse = true;
                fp.predictor_bytes[l] += t.nbytes;
            } else if (part == "ffn_norm") {
                fp.ffn_norm_bytes[l] += t.nbytes;
            } else if (part == "ffn_gate" || part == "ffn_up" || part == "ffn_down_t" || part == "ffn_down") {
                fp.dense_ffn_bytes[l] += t.nbytes;
                if (part == "ffn_down") continue;
                // One row per neuron: [n_embd] x n_ff.
                const int64_t rows = t.ne.size() > 1 ? t.ne[1] : 1;
                fp.neuron_bytes[l] += t.nbytes / uint64_t(std::max<int64_t>(rows, 1));
                if (part == "ffn_up") fp.n_ff[l] = rows;
            } else if (part.ends_with("_exps")) {
                fp.expert_bytes[l] += t.nbytes;
                const uint64_t row = t.ne.size() == 3 ? t.nbytes / uint64_t(std::max<int64_t>(t.ne[1] * t.ne[2], 1)) : 0;
                if (part == "ffn_up_exps") up_row[l] = row;
                if (part == "ffn_down_exps" && model::down_stored_transposed(t, n_embd, expert_ff)) down_t_row[l] = row;
            } else if (part == "ffn_gate_inp") {
                continue;  // a mixture of experts' router stays on the CPU
            } else {
                fp.attn_bytes[l] += t.nbytes;  // attention and its norm; anything else rides with it
            }
        }
        if (!has_output) fp.output_bytes += embd_bytes;  // the LM head is the embedding table
        // SmallThinker's experts run gate first (ReGLU), as model/expert_ffn.h places them.
        if (*arch == "smallthinker")
            for (size_t l = 0; l < L; ++l)
                if (up_row[l] > 0 && down_t_row[l] > 0) fp.expert_neuron_bytes[l] = up_row[l] + down_t_row[l];
        fp.cannot_run = why_not_runnable(*file, head_dim);
        return fp;
    } catch (const EngineError& e) {
        return e.error();
    }
}

namespace {

// The session's compute buffers in memory (model/scratch.cpp) for the query's batch and threads.
uint64_t host_scratch_bytes(const ModelFootprint& fp, const FitQuery& q) {
    const int32_t n_ctx = std::max(q.n_ctx, 1);
    model::HParams per_thread;  // a worker's buffers depend on the heads' width alone
    per_thread.n_embd_head = fp.head_dim;
    const int32_t n_threads = q.n_threads > 0 ? q.n_threads : tensor::default_thread_count();
    return fp.scratch_bytes_per_token * uint64_t(std::clamp(q.n_batch, 1, n_ctx)) +
           model::scratch_bytes_per_thread(per_thread, n_ctx) * uint64_t(n_threads);
}

}  // namespace

uint64_t compute_margin_bytes(const ModelFootprint& fp, const FitQuery& q) {
    const int32_t n_ctx = std::max(q.n_ctx, 1);
    backend::WorkShape w;
    w.n_embd = fp.n_embd;
    w.n_q = fp.n_q;
    w.n_gqa = fp.n_gqa;
    w.n_ff = fp.n_ff_per_token;
    w.n_vocab = fp.n_vocab;
    w.n_layer = fp.n_layer;
    w.n_head = fp.n_head;
    w.head_dim = fp.head_dim;
    w.n_ctx = n_ctx;
    w.n_batch = std::clamp(q.n_batch, 1, n_ctx);
    return std::max(host_scratch_bytes(fp, q), backend::device_work_bytes(w));
}

Fit estimate_fit(const ModelFootprint& fp, const FitQuery& q) {
    Fit fit;
    if (!fp.cannot_run.empty()) {
        fit.kind = FitKind::CannotRun;
        fit.text = "can't run yet: " + fp.cannot_run;
        return fit;
    }
    const int32_t n_ctx = std::max(q.n_ctx, 1);
    const uint64_t kv = fp.kv_bytes_per_token * uint64_t(n_ctx);
    const uint64_t scratch = host_scratch_bytes(fp, q);
    // The model is read into memory whole, and the host keeps its own KV cache.
    fit.ram_needed = fp.weight_bytes + kv + scratch;
    if (q.ram_bytes > 0 && fit.ram_needed > q.ram_bytes) {
        fit.kind = FitKind::TooLarge;
        fit.text = "too large for this machine (needs " + byte_size(fit.ram_needed) + " of memory, " + byte_size(q.ram_bytes) +
                   " available)";
        return fit;
    }
    if (q.vram_budget == 0) {
        fit.text = "CPU only (no GPU in use)";
        return fit;
    }
    sparse::PlacementCosts c;
    c.attn_bytes = fp.attn_bytes;
    c.predictor_bytes = fp.predictor_bytes;
    c.ffn_norm_bytes = fp.ffn_norm_bytes;
    c.neuron_bytes = fp.neuron_bytes;
    c.n_ff = fp.n_ff;
    c.output_bytes = fp.output_bytes;
    c.kv_k_bytes = c.kv_v_bytes = kv / 2;
    c.margin_bytes = compute_margin_bytes(fp, q);
    if (!fp.sparse) {
        c.dense_ffn_bytes = fp.dense_ffn_bytes;
        const sparse::Placement p = sparse::plan_layer_offload(c, q.vram_budget);
        return fp.n_expert > 0 ? moe_fit(p, fp, fit) : dense_fit(p, fp.n_layer, fit);
    }
    const sparse::Placement p = sparse::plan_placement(c, q.vram_budget);
    int64_t total = 0;
    for (int64_t n : fp.n_ff) total += n;
    fit.neuron_share = total > 0 ? std::min(1.0, double(p.ffn_capacity_neurons) / double(total)) : 0.0;
    if (!p.dense_complete || p.ffn_capacity_neurons == 0) {
        fit.kind = p.bytes_used > 0 ? FitKind::Hybrid : FitKind::CpuOnly;
        fit.text = p.bytes_used > 0 ? "hybrid: dense parts on GPU, every FFN neuron on the CPU" : "CPU only (GPU budget too small)";
        return fit;
    }
    if (fit.neuron_share >= 1.0 && p.kv_k_on_device) {
        fit.kind = FitKind::AllOnGpu;
        fit.text = "all on GPU";
        return fit;
    }
    fit.kind = FitKind::Hybrid;
    fit.text = fit.neuron_share >= 1.0
                   ? "hybrid: every neuron on GPU, KV cache on the CPU"
                   : "hybrid: " + std::to_string(int(std::floor(fit.neuron_share * 100.0))) + " % of neurons on GPU";
    return fit;
}

}  // namespace ember
